// The prober manager (pkg/kubelet/prober/prober_manager.go): AddPod gives each container with an httpGet
// readiness probe its worker (prober.ts), UpdatePodStatus makes the containers ready as they start, RemovePod
// stops the workers. A result that changes goes to the status manager and syncs the pod ("SyncLoop (probe)").
// A native sidecar gets its workers as it starts (the sim adds them per container, the real AddPod at once:
// a worker does not probe a container it has not seen running), a startupProbe's among them.
import { kubeletEvent } from './events.ts';
import type { KubeletPause } from './faults.ts';
import type { ContainerSpec, PodSpec } from './pod-types.ts';
import { type PodWorker, reached } from './pod-worker.ts';
import { type ProbeTarget, type ReadinessProber, startReadinessProber } from './prober.ts';
import { resolvePort } from './runtime.ts';
import type { StatusManager } from './status-manager.ts';
import type { KubeObject, Store } from './store.ts';

/** The kubelet's portTarget: where a container port of a pod is reached. */
type PortTarget = (uid: string, containerPort: number) => ReturnType<ProbeTarget['target']>;

export class ProberManager {
  private readonly store: Store;
  private readonly status: StatusManager;
  private readonly pause: KubeletPause;
  private readonly portTarget: PortTarget;
  /** Each pod's readiness workers by container name, and which workers are startup ones (for whom). */
  private readonly readiness = new WeakMap<PodWorker, Map<string, ReadinessProber>>();
  private readonly startup = new WeakMap<ReadinessProber, string>();

  constructor(store: Store, status: StatusManager, pause: KubeletPause, portTarget: PortTarget) {
    this.store = store;
    this.status = status;
    this.pause = pause;
    this.portTarget = portTarget;
  }

  /** AddPod. A probe's result is the prober goroutine's: a stopped kubelet acts on it once it runs again. */
  addPod(worker: PodWorker, pod: KubeObject): void {
    for (const c of (pod.spec as PodSpec).containers) this.addReadiness(worker, pod, c);
  }

  /**
   * A native sidecar's workers: readiness as for any container, and a startupProbe's, whose first success
   * (worker.go: a startup worker stops probing once the container has started) calls `onStarted`.
   */
  addInitContainer(worker: PodWorker, pod: KubeObject, c: ContainerSpec, onStarted: () => void): void {
    this.addReadiness(worker, pod, c);
    const probe = c.startupProbe;
    const httpGet = probe?.httpGet;
    if (!probe || !httpGet) return;
    const prober: ReadinessProber = startReadinessProber({
      target: () => this.portTarget(worker.uid, resolvePort(httpGet.port, c.ports ?? [])),
      probe: { ...probe, httpGet },
      onChange: (ok) => {
        if (!ok) return;
        prober.stop();
        this.pause.whenRunning(() => {
          if (!reached(worker, 'finished')) onStarted();
        });
      },
      onFailure: (output) =>
        this.pause.whenRunning(() =>
          kubeletEvent(this.store, pod, 'Warning', 'Unhealthy', `Startup probe failed: ${output}`, c.name),
        ),
    });
    this.startup.set(prober, c.name);
    worker.probers.push(prober);
  }

  /**
   * UpdatePodStatus for a sidecar the PLEG saw running: its startup worker begins; once it has started, an
   * unprobed sidecar is ready, a probed one gets its initial result and a manual run.
   */
  initContainerStarted(worker: PodWorker, c: ContainerSpec, started: boolean): void {
    for (const prober of worker.probers) if (this.startup.get(prober) === c.name) prober.containerStarted();
    if (!started) return;
    if (!c.readinessProbe?.httpGet) this.setContainerReady(worker, c.name, true);
    this.readiness.get(worker)?.get(c.name)?.containerStarted();
  }

  private addReadiness(worker: PodWorker, pod: KubeObject, c: ContainerSpec): void {
    const probe = c.readinessProbe;
    const httpGet = probe?.httpGet;
    if (!probe || !httpGet) return;
    const prober = startReadinessProber({
      target: () => this.portTarget(worker.uid, resolvePort(httpGet.port, c.ports ?? [])),
      probe: { ...probe, httpGet },
      onChange: (ready) => this.pause.whenRunning(() => this.setContainerReady(worker, c.name, ready)),
      onFailure: (output) =>
        this.pause.whenRunning(() =>
          kubeletEvent(this.store, pod, 'Warning', 'Unhealthy', `Readiness probe failed: ${output}`, c.name),
        ),
    });
    worker.probers.push(prober);
    let byName = this.readiness.get(worker);
    if (!byName) this.readiness.set(worker, (byName = new Map()));
    byName.set(c.name, prober);
  }

  /** UpdatePodStatus in the sync after ContainerStarted: an unprobed container is ready as it runs; a probed one gets its initial result and a manual run. */
  containersStarted(worker: PodWorker, spec: PodSpec): void {
    for (const c of spec.containers) if (!c.readinessProbe?.httpGet) this.setContainerReady(worker, c.name, true);
    const byName = this.readiness.get(worker);
    for (const c of spec.containers) byName?.get(c.name)?.containerStarted();
  }

  /**
   * UpdatePodStatus at every later sync of a running pod (prober_manager.go): a container that runs and is not yet
   * ready gets a manual run, which restarts its ticker. So its probes, and the sync a new result asks for, follow
   * the syncs, which mostly follow relists: on the v1.37.2 node (--v=4, 2026-12-03) "Probe succeeded" came 5 ms
   * after such a run, its sync waited for the next relist, and a delete 1.1 s after Ready reached
   * SyncTerminatingPod 0.87-0.89 s later.
   */
  podSynced(worker: PodWorker): void {
    // Running as the sync's status has it: the last relist's, so an exit the PLEG has seen is not probed again.
    for (const [name, prober] of this.readiness.get(worker) ?? [])
      if (!worker.containers.get(name)?.exitSeen) prober.syncedNotReady();
  }

  /** RemovePod; also once the pod is terminal, which is no longer probed. */
  removePod(worker: PodWorker): void {
    for (const prober of worker.probers) prober.stop();
  }

  /** The probe result also syncs the pod ("SyncLoop (probe)"). */
  private setContainerReady(worker: PodWorker, name: string, ready: boolean): void {
    if (reached(worker, 'finished')) return;
    this.status.setContainerReadiness(worker, name, ready);
    worker.loop.update('sync');
  }
}
