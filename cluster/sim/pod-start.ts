// SyncPod's starts (kuberuntime_manager.go SyncPod, steps 4-7): the sandbox, then the containers the sync's
// actions name: the pod's first native sidecar, each next one once the one before it has started
// (init-containers.ts), and the main containers once the last has. Each start is seen by the PLEG's next
// relist, whose ContainerStarted event syncs the pod again.
import { computeInitContainerActions, firstStart } from './init-containers.ts';
import type { ContainerRecord, RuntimeManager } from './kuberuntime.ts';
import type { Pleg } from './pleg.ts';
import type { ContainerSpec, PodSpec } from './pod-types.ts';
import { advance, type PodWorker } from './pod-worker.ts';
import type { ProberManager } from './prober-manager.ts';
import type { StatusManager } from './status-manager.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, wallNow } from './time.ts';
import type { GroundTruth } from './truth.ts';

export interface PodStartParts {
  store: Store;
  status: StatusManager;
  runtime: RuntimeManager;
  probers: ProberManager;
  pleg: Pleg;
  truth: GroundTruth;
  /** 1.36+: a sync that started something relists its pod at once (PLEGOnDemandRelist). */
  onDemandRelist: boolean;
  /** Every container started: the kubelet watches its exit. */
  started(worker: PodWorker, container: ContainerRecord): void;
}

export class PodStarter {
  private readonly parts: PodStartParts;
  /** The starts under way: the kubelet's shutdown waits for them to give up, so no process starts after it. */
  private readonly starting = new Set<Promise<void>>();

  constructor(parts: PodStartParts) {
    this.parts = parts;
  }

  /** A sync's starts, awaited where shutdown can find them; true when one started. */
  async tracked(worker: PodWorker, start: Promise<boolean>): Promise<boolean> {
    const settled = start.then(
      () => undefined,
      () => undefined,
    );
    this.starting.add(settled);
    let startedOne: boolean;
    try {
      startedOne = await start;
    } finally {
      this.starting.delete(settled);
    }
    // The sandbox or a container is new in the runtime: result.SyncResults is not empty, so 1.36+
    // relist the pod at once (1.37.2 kubelet.go:2321-2326); 1.34 and 1.35 wait for the next relist.
    if (startedOne && this.parts.onDemandRelist) worker.loop.postSync(() => this.parts.pleg.requestRelist(worker.uid));
    return startedOne;
  }

  /** Resolves once every start under way has finished or given up. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.starting);
  }

  /** The first SyncPod after Pending: RunPodSandbox, then the first sidecar or the main containers. */
  async createContainers(worker: PodWorker, pending: KubeObject): Promise<void> {
    await this.parts.runtime.runPodSandbox(pending, worker);
    const first = firstStart(pending.spec as PodSpec);
    if (first.start === 'init') return this.startInitContainer(worker, pending, first.index);
    return this.startMainContainers(worker, pending);
  }

  /**
   * A later SyncPod while the pod has not initialized: computeInitContainerActions and what it says (the
   * sidecar's status, then the next start). Resolves once that start is done; false when there was none.
   */
  async syncInitContainers(worker: PodWorker): Promise<boolean> {
    const pod = this.parts.store.get('pods', worker.namespace, worker.name);
    if (!pod || pod.metadata.uid !== worker.uid || pod.metadata.deletionTimestamp) return false;
    const action = computeInitContainerActions(pod.spec as PodSpec, worker.init);
    if (action.kind === 'wait') return false;
    const c: ContainerSpec = action.container;
    worker.init.published.set(c.name, action.started);
    const written = this.parts.status.initContainerRunning(
      worker,
      c.name,
      worker.containers.get(c.name)?.startedAt ?? apiTime(),
      action.started,
      action.initialized,
    );
    if (!written) return false;
    this.parts.probers.initContainerStarted(worker, c, action.started);
    if (!action.then) return false;
    if (action.then.start === 'main') {
      worker.init.initialized = true;
      await this.startMainContainers(worker, written);
    } else {
      await this.startInitContainer(worker, written, action.then.index);
    }
    return true;
  }

  private async startMainContainers(worker: PodWorker, pod: KubeObject): Promise<void> {
    const { containers } = pod.spec as PodSpec;
    await this.parts.runtime.startContainers(pod, worker, containers, (container) => this.track(worker, container));
    this.parts.probers.addPod(worker, pod);
    // GenericPLEG: the next relist (or, 1.36+, the pod's own relist after this sync) sees the containers
    // running and hands the pod worker a ContainerStarted event.
    void this.parts.pleg.newerThan(wallNow(), worker.uid).then(() => {
      for (const c of containers) this.parts.truth.container({ metadata: worker }, c.name).startSeenAt ??= wallNow();
      advance(worker, 'startSeen');
      worker.loop.update('sync');
    });
  }

  /** One native sidecar: started, its probes added (a startupProbe's success syncs the pod), its start seen by the next relist. */
  private async startInitContainer(worker: PodWorker, pod: KubeObject, index: number): Promise<void> {
    const spec = (pod.spec as PodSpec).initContainers![index]!;
    await this.parts.runtime.startContainers(pod, worker, [spec], (container) => this.track(worker, container));
    worker.init.started = index;
    this.parts.probers.addInitContainer(worker, pod, spec, () => {
      this.parts.truth.container({ metadata: worker }, spec.name).startupSucceededAt ??= wallNow();
      worker.init.startupDone.add(spec.name);
      worker.loop.update('sync');
    });
    void this.parts.pleg.newerThan(wallNow(), worker.uid).then(() => {
      this.parts.truth.container({ metadata: worker }, spec.name).startSeenAt ??= wallNow();
      worker.init.seen = Math.max(worker.init.seen, index);
      worker.loop.update('sync');
    });
  }

  private track(worker: PodWorker, container: ContainerRecord): void {
    this.parts.truth.container({ metadata: worker }, container.spec.name).startedAt = wallNow();
    this.parts.started(worker, container);
  }
}
