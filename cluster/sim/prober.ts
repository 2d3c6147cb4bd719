// Readiness: an httpGet probe drives the Ready condition. Until the first success the sim probes
// every 50 ms instead of every periodSeconds, so a pod is Ready as soon as it can serve.
import { request } from 'node:http';

const FAST_UNTIL_READY_MS = 50;

export interface ProbeTarget {
  /** Where the probed port is reached (the kubelet's portTarget); none means the probe fails. */
  target: { host: string; port: number } | undefined;
  probe: any;
  onChange(ready: boolean): void;
  /** prober.go: every failed probe is a Warning event Unhealthy ("Readiness probe failed: ..."). */
  onFailure(output: string): void;
}

export function startReadinessProber(target: ProbeTarget): () => void {
  const get = target.probe.httpGet;
  const period = Math.max(1, Number(target.probe.periodSeconds ?? 10)) * 1000;
  const failureThreshold = Math.max(1, Number(target.probe.failureThreshold ?? 3));
  const timeoutMs = Math.max(1, Number(target.probe.timeoutSeconds ?? 1)) * 1000;
  const endpoint = target.target;
  let ready = false;
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const url = `http://${endpoint?.host ?? 'pod'}:${endpoint?.port ?? get.port}${get.path ?? '/'}`;
  const probeOnce = () => new Promise<{ ok: boolean; output: string }>((resolve) => {
    if (!endpoint) return resolve({ ok: false, output: `Get "${url}": the container has no port ${get.port}` });
    const req = request({ host: endpoint.host, port: endpoint.port, path: get.path ?? '/', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 400 ? { ok: true, output: '' } : { ok: false, output: `HTTP probe failed with statuscode: ${status}` });
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, output: `Get "${url}": ${error.code === 'ECONNREFUSED' ? 'dial tcp: connect: connection refused' : error.message}` }));
    req.end();
  });

  const tick = async () => {
    const { ok, output } = await probeOnce();
    if (stopped) return;
    // Failures while the sim's program is still starting (probed every 50 ms) are the sim's own; a
    // real kubelet's first probe comes a period after the container started. After that, each counts.
    if (!ok && (ready || failures > 0)) target.onFailure(output);
    if (ok) {
      failures = 0;
      if (!ready) { ready = true; target.onChange(true); }
    } else if (ready && ++failures >= failureThreshold) {
      ready = false;
      target.onChange(false);
    }
    timer = setTimeout(tick, ready || failures > 0 ? period : FAST_UNTIL_READY_MS);
  };
  timer = setTimeout(tick, Math.max(0, Number(target.probe.initialDelaySeconds ?? 0)) * 1000);
  return () => { stopped = true; clearTimeout(timer); };
}
