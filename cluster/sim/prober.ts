// Readiness: an httpGet probe drives the Ready condition. Until the first success the sim probes
// every 50 ms instead of every periodSeconds, so a pod is Ready as soon as it can serve.
import { request } from 'node:http';

const FAST_UNTIL_READY_MS = 50;

export interface ProbeTarget {
  /** Where the probed port is reached (the kubelet's portTarget); none means the probe fails. */
  target: { host: string; port: number } | undefined;
  probe: any;
  onChange(ready: boolean): void;
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

  const probeOnce = () => new Promise<boolean>((resolve) => {
    if (!endpoint) return resolve(false);
    const req = request({ host: endpoint.host, port: endpoint.port, path: get.path ?? '/', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });

  const tick = async () => {
    const ok = await probeOnce();
    if (stopped) return;
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
