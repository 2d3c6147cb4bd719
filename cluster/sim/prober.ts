// Readiness as pkg/kubelet/prober/worker.go runs it (1.34): the worker starts with the pod's first
// sync and probes on a ticker of periodSeconds; a container it has not yet seen running is not probed.
// When the sync after the PLEG's ContainerStarted event generates the pod's status, the prober
// manager's UpdatePodStatus finds the readiness unknown, sets the initial result (not ready) and
// triggers a manual run at once ("Triggered Probe by manual run"); it does so at every later sync too,
// as long as the container runs and is not ready, and each manual run restarts the ticker from that
// moment (worker.go run: probeTicker.Reset). A result that changes is handed to the sync loop
// ("SyncLoop (probe)"), which syncs the pod.
import { request } from 'node:http';
import type { ReadinessProbe } from './pod-types.ts';

export interface ProbeTarget {
  /** Where the probed port is reached now (the kubelet's portTarget), asked at each probe; none means the probe fails. */
  target(): { host: string; port: number } | undefined;
  probe: ReadinessProbe & { httpGet: NonNullable<ReadinessProbe['httpGet']> };
  /** The results manager changed: the first (initial) result, then every flip. */
  onChange(ready: boolean): void;
  /** prober.go: every failed probe is a Warning event Unhealthy ("Readiness probe failed: ..."). */
  onFailure(output: string): void;
}

export interface ReadinessProber {
  /** UpdatePodStatus saw the container running with no result yet: initial result, then a manual run. */
  containerStarted(): void;
  /** UpdatePodStatus at a later sync: a running container not yet ready gets a manual run (none before it started). */
  syncedNotReady(): void;
  stop(): void;
}

/** Go's net/http error for a port nobody listens on, as the kubelet's probe and hook events quote it. */
export const CONNECTION_REFUSED = 'dial tcp: connect: connection refused';

export function startReadinessProber(target: ProbeTarget): ReadinessProber {
  const get = target.probe.httpGet;
  const period = Math.max(1, Number(target.probe.periodSeconds ?? 10)) * 1000;
  const failureThreshold = Math.max(1, Number(target.probe.failureThreshold ?? 3));
  const successThreshold = Math.max(1, Number(target.probe.successThreshold ?? 1));
  const initialDelayMs = Math.max(0, Number(target.probe.initialDelaySeconds ?? 0)) * 1000;
  const timeoutMs = Math.max(1, Number(target.probe.timeoutSeconds ?? 1)) * 1000;
  let startedAt: number | null = null;
  let result: boolean | null = null;
  let lastResult: boolean | null = null;
  let resultRun = 0;
  let probing = false;
  // manualTriggerCh holds one trigger: one sent during a probe runs as soon as it ends.
  let triggered = false;
  let stopped = false;

  const probeOnce = () =>
    new Promise<{ ok: boolean; output: string }>((resolve) => {
      const endpoint = target.target();
      const url = `http://${endpoint?.host ?? 'pod'}:${endpoint?.port ?? get.port}${get.path ?? '/'}`;
      // Nothing listens there (a port no container publishes, or its process has exited): refused, as in the pod's network.
      if (!endpoint) return resolve({ ok: false, output: `Get "${url}": ${CONNECTION_REFUSED}` });
      const req = request(
        { host: endpoint.host, port: endpoint.port, path: get.path ?? '/', agent: false, timeout: timeoutMs },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          resolve(
            status >= 200 && status < 400
              ? { ok: true, output: '' }
              : { ok: false, output: `HTTP probe failed with statuscode: ${status}` },
          );
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')),
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        resolve({
          ok: false,
          output: `Get "${url}": ${error.code === 'ECONNREFUSED' ? CONNECTION_REFUSED : error.message}`,
        }),
      );
      req.end();
    });

  const set = (ready: boolean) => {
    if (result === ready) return;
    result = ready;
    target.onChange(ready);
  };

  // worker.doProbe: not before the container runs or its initial delay passes; thresholds count runs of one result.
  const doProbe = async () => {
    if (stopped || probing || startedAt === null || performance.now() - startedAt < initialDelayMs) return;
    probing = true;
    const { ok, output } = await probeOnce();
    probing = false;
    if (stopped) return;
    if (triggered) {
      triggered = false;
      queueMicrotask(manualRun);
    }
    if (!ok) target.onFailure(output);
    if (lastResult === ok) resultRun++;
    else {
      lastResult = ok;
      resultRun = 1;
    }
    if ((ok && resultRun < successThreshold) || (!ok && resultRun < failureThreshold)) return;
    set(ok);
  };

  const startTicker = () => setInterval(() => void doProbe(), period);
  let ticker = startTicker();
  // "Triggered Probe by manual run": the ticker restarts from now, then the probe runs.
  const manualRun = () => {
    if (stopped) return;
    if (probing) {
      triggered = true;
      return;
    }
    clearInterval(ticker);
    ticker = startTicker();
    void doProbe();
  };
  return {
    containerStarted() {
      if (stopped || startedAt !== null) return;
      startedAt = performance.now();
      set(false);
      manualRun();
    },
    syncedNotReady() {
      if (startedAt !== null && result !== true) manualRun();
    },
    stop() {
      stopped = true;
      clearInterval(ticker);
    },
  };
}
