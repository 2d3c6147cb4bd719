// The process kubelet: a pod worker for each pod bound to this node (SyncPod, SyncTerminatingPod,
// SyncTerminatedPod), its containers as local processes (kuberuntime.ts), their exits as the PLEG
// reports them, and termination by the real kubelet's rules (kill.ts). Like the real one it learns of
// pods from its informer; the status manager writes every status and the final delete, the prober
// manager keeps readiness, and dead containers go by container-gc.ts. Native sidecars start one per
// sync before the main containers (init-containers.ts) and stop in their order (termination-order.ts).
import { activeDeadline, DEADLINE_EXCEEDED } from './active-deadline.ts';
import { ContainerGC, cleanUpContainersInPod } from './container-gc.ts';
import { kubeletEvent } from './events.ts';
import { newInitProgress } from './init-containers.ts';
import { ApiReachability, Faults, KubeletPause } from './faults.ts';
import { FeatureGates } from './feature-gates.ts';
import { type ContainerRecord, RuntimeManager } from './kuberuntime.ts';
import { Pleg, REAL_NODE_TIMING, type KubeletTiming } from './pleg.ts';
import { podConfig } from './pod-config.ts';
import {
  advance,
  calculateEffectiveGracePeriod,
  type PodWorker,
  PodWorkerLoop,
  reached,
  type WorkType,
} from './pod-worker.ts';
import type { PodSpec } from './pod-types.ts';
import { PodStarter } from './pod-start.ts';
import { portTarget, type ServedPod } from './kubelet-server.ts';
import type { NodePorts } from './ports.ts';
import { ProberManager } from './prober-manager.ts';
import type { ImageMap } from './runtime.ts';
import { StatusManager } from './status-manager.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, wallNow } from './time.ts';
import type { GroundTruth } from './truth.ts';
import { DEFAULT_SIM_MINOR, SIM_MINORS, type SimMinor } from './versions.ts';

const refOf = (pod: KubeObject) => ({
  uid: pod.metadata.uid,
  namespace: pod.metadata.namespace!,
  name: pod.metadata.name,
});

export class Kubelet {
  private readonly workers = new Map<string, PodWorker>();
  private readonly store: Store;
  private readonly ports: NodePorts;
  private readonly truth: GroundTruth;
  private readonly faults: Faults;
  private readonly status: StatusManager;
  private readonly probers: ProberManager;
  private readonly starter: PodStarter;
  private readonly runtime: RuntimeManager;
  private readonly pleg: Pleg;
  private readonly syncTicker: NodeJS.Timeout;
  private readonly containerGc: ContainerGC;
  private readonly unsubscribe: () => void;
  /** SIGSTOP/SIGCONT of this kubelet (the pause-kubelet fault): its own timers and callbacks wait while it is stopped. */
  readonly pause: KubeletPause;
  private readonly gates: FeatureGates;

  constructor(
    store: Store,
    images: ImageMap,
    ports: NodePorts,
    truth: GroundTruth,
    faults: Faults,
    timing: KubeletTiming = REAL_NODE_TIMING,
    minor: SimMinor = SIM_MINORS.get(DEFAULT_SIM_MINOR)!,
    api: ApiReachability = new ApiReachability(),
    pause: KubeletPause = new KubeletPause(),
    gates: FeatureGates = new FeatureGates(DEFAULT_SIM_MINOR),
  ) {
    this.store = store;
    this.ports = ports;
    this.truth = truth;
    this.faults = faults;
    this.pause = pause;
    this.gates = gates;
    this.status = new StatusManager(store);
    this.probers = new ProberManager(store, this.status, pause, (uid, port) => portTarget(this.served(uid), port));
    this.runtime = new RuntimeManager(store, images, timing.runtime, minor, gates);
    this.pleg = new Pleg(timing, pause);
    this.starter = new PodStarter({
      store,
      status: this.status,
      runtime: this.runtime,
      probers: this.probers,
      pleg: this.pleg,
      truth,
      // PLEGOnDemandRelist (feature-gates.ts): after a SyncPod that did something in the runtime, the kubelet
      // relists that one pod at once (kubelet.go SyncPod's postSync → RequestPodRelist; pleg/generic.go relistPod).
      onDemandRelist: gates.enabled('PLEGOnDemandRelist'),
      started: (worker, container) => {
        void container.process.exited.then((exit) =>
          this.containerExited(worker, container, exit.exitCode, exit.wallMs),
        );
      },
    });
    // syncLoop's syncTicker: pods whose active deadline has passed ask to be synced (active_deadline.go ShouldSync).
    this.syncTicker = setInterval(() => {
      if (!pause.paused) this.syncTick();
    }, timing.syncTickMs);
    this.syncTicker.unref();
    this.containerGc = new ContainerGC(() => this.workers.values(), pause);
    this.unsubscribe = podConfig(
      store,
      {
        add: (pod) => this.admit(pod),
        deleting: (pod) => this.podDeleting(pod),
        releasable: (pod) => this.finishDeletion(pod),
        removed: (pod) => this.ports.forget(pod.metadata.uid),
      },
      api,
      pause,
    );
  }

  /** HandlePodAdditions: a pod whose image the node lacks stops at ErrImagePull; every other gets its pod worker. */
  private admit(pod: KubeObject): void {
    const missing = this.runtime.missingImages(pod);
    if (missing.size) return this.status.imagePullFailed(refOf(pod), missing);
    // The loop's handler is called only after update(), by which time `worker` is assigned.
    const loop = new PodWorkerLoop(pod.metadata.uid, this.pleg, (work) =>
      work === 'sync'
        ? this.syncPod(worker)
        : work === 'terminating'
          ? this.syncTerminatingPod(worker)
          : this.syncTerminatedPod(worker),
    );
    const worker: PodWorker = {
      ...refOf(pod),
      stage: 'admitted',
      hostPorts: this.ports.of(pod.metadata.uid),
      containers: new Map(),
      loop,
      probers: [],
      init: newInitProgress(pod.spec as PodSpec),
      leadContainer: (pod.spec as PodSpec).containers[0]!.name,
    };
    this.workers.set(worker.uid, worker);
    loop.update('sync');
  }

  /** SyncPod: the first one writes Pending, creates the sandbox and starts the first containers; later ones start the next and write what the PLEG and the deadline say. */
  private async syncPod(worker: PodWorker): Promise<WorkType | undefined> {
    if (worker.stage === 'admitted') {
      await this.starter.tracked(
        worker,
        this.createContainers(worker).then(() => true),
      );
      return undefined;
    }
    if (!worker.init.initialized && worker.stage === 'created') {
      await this.starter.tracked(worker, this.starter.syncInitContainers(worker));
    }
    if (worker.stage === 'startSeen') this.publishRunning(worker);
    else if (worker.stage === 'running') this.probers.podSynced(worker);
    if (this.publishExits(worker)) return 'terminating';
    if (worker.deadlineAt !== undefined && wallNow() >= worker.deadlineAt) return this.deadlineExceeded(worker);
    return undefined;
  }

  private async createContainers(worker: PodWorker): Promise<void> {
    advance(worker, 'created');
    const startedWall = wallNow();
    const pending = this.status.pending(worker, apiTime(startedWall));
    if (!pending) return;
    worker.deadlineAt = activeDeadline(startedWall, pending.spec as PodSpec);
    await this.starter.createContainers(worker, pending);
  }

  /** The sync after ContainerStarted: Running, the containers' start, and the prober's first (manual) run. */
  private publishRunning(worker: PodWorker): void {
    advance(worker, 'running');
    const running = this.status.running(
      worker,
      (name) => worker.containers.get(name)?.startedAt,
      (name) => (this.gates.enabled('ContainerStopSignals') ? worker.containers.get(name)?.stopSignal : undefined),
    );
    if (!running) return;
    this.probers.containersStarted(worker, running.spec as PodSpec);
  }

  private containerExited(worker: PodWorker, container: ContainerRecord, exitCode: number, exitedAt: number): void {
    const record = this.truth.for({ metadata: worker });
    Object.assign(this.truth.container({ metadata: worker }, container.spec.name), {
      exitedAt,
      exitCode,
      oomKilledAt: container.oomKilledAt,
    });
    // The pod's record keeps the first main container's exit (the lab's), as with one container.
    if (container.spec.name === worker.leadContainer) {
      record.exitedAt = exitedAt;
      record.exitCode = exitCode;
    }
    container.exitCode = exitCode;
    // During killPod the exit is read from the runtime when it returns (SyncTerminatingPod); every other
    // exit reaches the pod worker as the PLEG's ContainerDied event at the end of the next relist.
    // Either way that event is the kubelet's cue to clean up the pod's dead containers.
    const killing = reached(worker, 'killing');
    void this.pleg.newerThan(exitedAt, worker.uid).then(() => {
      cleanUpContainersInPod(worker);
      if (killing) return;
      record.exitSeenAt = wallNow();
      container.exitSeen = true;
      worker.loop.update('sync');
    });
  }

  /** Writes every exit seen so far in one status write; true once all containers have exited ("Pod is terminal"). */
  private publishExits(worker: PodWorker): boolean {
    const seen = [...worker.containers].filter(([, c]) => c.exitSeen);
    if (!seen.length) return false;
    const allExited = seen.length === worker.containers.size;
    const exits = seen.map(([name, c]) => ({
      name,
      exitCode: c.exitCode ?? 0,
      oomKilled: c.oomKilledAt !== undefined,
      startedAt: c.startedAt,
    }));
    const updated = this.status.containersExited(worker, exits, allExited, worker.evicted);
    if (allExited) {
      advance(worker, 'finished');
      this.probers.removePod(worker);
    }
    return allExited && updated !== undefined;
  }

  /** SyncTerminatingPod: killPod with the grace as it is now; its return writes the containers' end. */
  private async syncTerminatingPod(worker: PodWorker): Promise<WorkType> {
    const running = [...worker.containers.values()].filter((c) => !c.process.hasExited);
    if (running.length) {
      const current = this.store.get('pods', worker.namespace, worker.name);
      if (current?.metadata.uid === worker.uid) {
        await this.killPod(worker, current, calculateEffectiveGracePeriod(current));
      }
    }
    const record = this.truth.for({ metadata: worker });
    for (const c of worker.containers.values()) {
      if (c.process.hasExited && !c.exitSeen) {
        c.exitSeen = true;
        record.exitSeenAt ??= wallNow();
      }
    }
    this.publishExits(worker);
    // killPod ends with StopPodSandbox: the next relist sees the sandbox dead too, and its ContainerDied (the
    // sandbox's ID, kubelet.go:2796-2799) is a second cue to clean up, now that the pod is terminated. On the
    // v1.37.2 node, when the container's own ContainerDied came before that (the relist fell between the exit
    // and the sandbox's stop), its removal came at the sandbox's.
    void this.pleg.newerThan(wallNow(), worker.uid).then(() => cleanUpContainersInPod(worker));
    return 'terminated';
  }

  /** SyncTerminatedPod, then the status manager: once the containers are gone it deletes the object with grace 0. */
  private syncTerminatedPod(worker: PodWorker): undefined {
    advance(worker, 'terminated');
    this.probers.removePod(worker);
    const latest = this.store.get('pods', worker.namespace, worker.name);
    if (latest?.metadata.uid === worker.uid) this.finishDeletion(latest);
  }

  /** The final delete, once the pod is deleting and the kubelet is done with it (a finalizer's removal alone is not enough). */
  private finishDeletion(pod: KubeObject): void {
    const worker = this.workers.get(pod.metadata.uid);
    if (!pod.metadata.deletionTimestamp || (worker && worker.stage !== 'terminated')) return;
    if (!this.status.deletePod(refOf(pod))) return;
    worker?.loop.stop();
    this.workers.delete(pod.metadata.uid);
    this.pleg.forget(pod.metadata.uid);
  }

  /** SyncLoop DELETE: the API server set deletionTimestamp; the pod worker is asked to terminate. */
  private podDeleting(pod: KubeObject): void {
    const worker = this.workers.get(pod.metadata.uid);
    this.truth.for(pod).deleteReceivedAt ??= wallNow();
    if (worker) worker.deleted = true;
    if (!worker || worker.stage === 'terminated') return this.finishDeletion(pod);
    // The grace is read when SyncTerminatingPod begins, so a second DELETE that shortened it meanwhile counts.
    worker.loop.update('terminating');
  }

  private killPod(worker: PodWorker, pod: KubeObject, gracePeriod: number): Promise<void> {
    const truth = this.truth.for(pod);
    truth.gracePeriodSeconds = gracePeriod;
    advance(worker, 'killing');
    const ignoreSigterm = this.faults.ignoreSigterm.has(Faults.key(worker.namespace, worker.name));
    return this.runtime.killPod(pod, worker, gracePeriod, {
      truth,
      containerTruth: (name) => this.truth.container(pod, name),
      ignoreSigterm,
      portTarget: (port) => portTarget(this.served(worker.uid), port),
      kubeletRunning: () => this.pause.running(),
    });
  }

  private syncTick(): void {
    const now = wallNow();
    for (const worker of this.workers.values()) {
      if (worker.deadlineAt !== undefined && now >= worker.deadlineAt && !worker.loop.terminationRequested)
        worker.loop.update('sync');
    }
  }

  /** Past the active deadline (the status manager's Ready False first); a terminal pod is no longer probed. */
  private deadlineExceeded(worker: PodWorker): WorkType | undefined {
    worker.evicted = DEADLINE_EXCEEDED;
    const pod = this.status.deadlineExceeded(worker);
    if (!pod) return undefined;
    this.probers.removePod(worker);
    kubeletEvent(this.store, pod, 'Normal', worker.evicted.reason, worker.evicted.message);
    return 'terminating';
  }

  /** What the kubelet's server shows of a pod (kubelet-server.ts). */
  served(uid: string): ServedPod | undefined {
    const worker = this.workers.get(uid);
    return worker && { pod: worker, done: reached(worker, 'finished') };
  }

  /** Stops every process this kubelet started, at once. */
  async shutdown(): Promise<void> {
    this.unsubscribe();
    this.pleg.stop();
    clearInterval(this.syncTicker);
    this.containerGc.stop();
    this.pause.resume();
    this.runtime.stop();
    const exits: Promise<unknown>[] = [];
    for (const worker of this.workers.values()) {
      worker.loop.stop();
      this.probers.removePod(worker);
      for (const c of worker.containers.values()) {
        c.process.signal('SIGKILL');
        exits.push(c.process.exited);
      }
    }
    await this.starter.settled();
    await Promise.all(exits);
  }
}
