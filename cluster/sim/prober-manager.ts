// The prober manager (pkg/kubelet/prober/prober_manager.go): AddPod gives each container with an httpGet
// readiness probe its worker (prober.ts), UpdatePodStatus makes the containers ready as they start, RemovePod
// stops the workers. A result that changes goes to the status manager and syncs the pod ("SyncLoop (probe)").
import { kubeletEvent } from './events.ts';
import type { KubeletPause } from './faults.ts';
import type { PodSpec } from './pod-types.ts';
import { type PodWorker, reached } from './pod-worker.ts';
import { type ProbeTarget, startReadinessProber } from './prober.ts';
import { resolvePort } from './runtime.ts';
import type { StatusManager } from './status-manager.ts';
import type { KubeObject, Store } from './store.ts';

/** The kubelet's portTarget: where a container port of a pod is reached. */
type PortTarget = (uid: string, containerPort: number) => ProbeTarget['target'];

export class ProberManager {
  private readonly store: Store;
  private readonly status: StatusManager;
  private readonly pause: KubeletPause;
  private readonly portTarget: PortTarget;

  constructor(store: Store, status: StatusManager, pause: KubeletPause, portTarget: PortTarget) {
    this.store = store;
    this.status = status;
    this.pause = pause;
    this.portTarget = portTarget;
  }

  /** AddPod. A probe's result is the prober goroutine's: a stopped kubelet acts on it once it runs again. */
  addPod(worker: PodWorker, pod: KubeObject): void {
    worker.probers = (pod.spec as PodSpec).containers.flatMap((c) => {
      const probe = c.readinessProbe;
      const httpGet = probe?.httpGet;
      if (!probe || !httpGet) return [];
      return [startReadinessProber({
        target: this.portTarget(worker.uid, resolvePort(httpGet.port, c.ports ?? [])), probe: { ...probe, httpGet },
        onChange: (ready) => this.pause.whenRunning(() => this.setContainerReady(worker, c.name, ready)),
        onFailure: (output) => this.pause.whenRunning(() => kubeletEvent(this.store, pod, 'Warning', 'Unhealthy', `Readiness probe failed: ${output}`, c.name)),
      })];
    });
  }

  /** UpdatePodStatus in the sync after ContainerStarted: an unprobed container is ready as it runs; a probed one gets its initial result and a manual run. */
  containersStarted(worker: PodWorker, spec: PodSpec): void {
    for (const c of spec.containers) if (!c.readinessProbe?.httpGet) this.setContainerReady(worker, c.name, true);
    for (const prober of worker.probers) prober.containerStarted();
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
