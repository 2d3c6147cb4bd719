// The kubelet's status manager (pkg/kubelet/status/status_manager.go) with the status the kubelet
// generates (status/generate.go): every write of a pod's status goes through here, read afresh and
// skipped once the pod is gone, and so does the kubelet's own final delete of the object.
import type { ContainerStatus, PodCondition, PodRef, PodSpec, PodStatus } from './pod-types.ts';
import { NODE_IP } from './ports.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime } from './time.ts';

/** A container's end as the pod worker saw it. */
export interface ContainerExit {
  name: string;
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
}

/** The Ready and ContainersReady conditions move together; `onlyIfTrue` leaves one already False as it is. */
function setReady(
  conditions: PodCondition[] | undefined,
  ready: boolean,
  reason: string | undefined,
  onlyIfTrue = false,
): void {
  const now = apiTime();
  for (const condition of conditions ?? []) {
    if (condition.type !== 'Ready' && condition.type !== 'ContainersReady') continue;
    if (onlyIfTrue && condition.status === 'False') continue;
    condition.status = ready ? 'True' : 'False';
    condition.lastTransitionTime = now;
    if (reason === undefined) delete condition.reason;
    else condition.reason = reason;
  }
}

const waiting = (
  containers: PodSpec['containers'],
  reason: (name: string, image: string) => ContainerStatus['state']['waiting'],
): ContainerStatus[] =>
  containers.map((c) => ({
    name: c.name,
    image: c.image,
    imageID: '',
    ready: false,
    restartCount: 0,
    started: false,
    state: { waiting: reason(c.name, c.image) },
  }));

/** A container's status in either list: the main containers', else the (restartable) init containers'. */
const statusOf = (status: PodStatus, name: string) =>
  status.containerStatuses?.find((c) => c.name === name) ?? status.initContainerStatuses?.find((c) => c.name === name);

export class StatusManager {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /** Reads the pod afresh and writes a status change; a pod already gone (or a new one of its name) is left alone. */
  private update(ref: PodRef, change: (status: PodStatus, spec: PodSpec) => void): KubeObject | undefined {
    const pod = this.store.get('pods', ref.namespace, ref.name);
    if (!pod || pod.metadata.uid !== ref.uid) return undefined;
    change(pod.status, pod.spec);
    return this.store.update('pods', pod);
  }

  /** An image the node cannot pull: ErrImagePull for its containers, the others still ContainerCreating. */
  imagePullFailed(ref: PodRef, unknown: ReadonlySet<string>): void {
    this.update(ref, (status, spec) => {
      status.containerStatuses = waiting(spec.containers, (name, image) =>
        unknown.has(name)
          ? { reason: 'ErrImagePull', message: `image "${image}" is not known to the simulated cluster` }
          : { reason: 'ContainerCreating' },
      );
    });
  }

  /**
   * The first sync: Pending with its start time, the sandbox not yet ready, every container creating.
   * With init containers (convertToAPIContainerStatuses' hasInitContainers) every container waits as
   * PodInitializing, and Initialized is False (generate.go ContainersNotInitialized) until they have started.
   */
  pending(ref: PodRef, startedAt: string): KubeObject | undefined {
    return this.update(ref, (status, spec) => {
      const inits = spec.initContainers ?? [];
      const waitingReason = inits.length ? 'PodInitializing' : 'ContainerCreating';
      status.startTime = startedAt;
      status.hostIP = NODE_IP;
      status.hostIPs = [{ ip: NODE_IP }];
      status.conditions = [
        { type: 'PodReadyToStartContainers', status: 'False', lastTransitionTime: startedAt },
        inits.length
          ? { type: 'Initialized', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotInitialized' }
          : { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
        { type: 'Ready', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'ContainersReady', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
      ];
      status.containerStatuses = waiting(spec.containers, () => ({ reason: waitingReason }));
      if (inits.length) status.initContainerStatuses = waiting(inits, () => ({ reason: waitingReason }));
    });
  }

  /**
   * The sync after the PLEG saw a sidecar running: its status running, the sandbox ready; `started` once its
   * startup is done (no startupProbe, or it succeeded); with `initialized`, the Initialized condition True.
   */
  initContainerRunning(
    ref: PodRef,
    name: string,
    startedAt: string,
    started: boolean,
    initialized: boolean,
  ): KubeObject | undefined {
    return this.update(ref, (status) => {
      const now = apiTime();
      for (const condition of status.conditions ?? []) {
        if (condition.type === 'PodReadyToStartContainers' && condition.status !== 'True') {
          condition.status = 'True';
          condition.lastTransitionTime = now;
        }
        if (initialized && condition.type === 'Initialized' && condition.status !== 'True') {
          condition.status = 'True';
          condition.lastTransitionTime = now;
          delete condition.reason;
        }
      }
      const container = status.initContainerStatuses?.find((c) => c.name === name);
      if (!container || container.state.terminated) return;
      container.imageID = `sim://${container.image}`;
      container.containerID = `sim://${ref.uid}-${name}`;
      container.started = started;
      container.state = { running: { startedAt } };
    });
  }

  /**
   * The sync after ContainerStarted: Running, the sandbox ready, each container running since it started; with
   * ContainerStopSignals on, its runtime's stop signal (kubelet_pods.go convertToAPIContainerStatuses; the sim
   * shows it for the main containers, not the sidecars).
   */
  running(
    ref: PodRef,
    startedAt: (container: string) => string | undefined,
    stopSignal: (container: string) => string | undefined = () => undefined,
  ): KubeObject | undefined {
    return this.update(ref, (status, spec) => {
      const now = apiTime();
      status.phase = 'Running';
      // No pod network: the pod's address is the node's, as for hostNetwork pods.
      status.podIP = NODE_IP;
      status.podIPs = [{ ip: NODE_IP }];
      for (const condition of status.conditions ?? []) {
        if (condition.type === 'PodReadyToStartContainers') {
          condition.status = 'True';
          condition.lastTransitionTime = now;
        }
      }
      status.containerStatuses = spec.containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: `sim://${c.image}`,
        containerID: `sim://${ref.uid}-${c.name}`,
        ready: false,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: startedAt(c.name) ?? now } },
        ...(stopSignal(c.name) ? { stopSignal: stopSignal(c.name) } : {}),
      }));
    });
  }

  /** SetContainerReadiness writes at once; the pod is Ready when every container is, its sidecars too (GenerateContainersReadyCondition). */
  setContainerReadiness(ref: PodRef, name: string, ready: boolean): void {
    this.update(ref, (status) => {
      const container = statusOf(status, name);
      if (!container || container.state.terminated) return;
      container.ready = ready;
      const allReady = [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].every(
        (c) => c.ready,
      );
      setReady(status.conditions, allReady, allReady ? undefined : 'ContainersNotReady');
    });
  }

  /**
   * Every exit seen so far in one write. With `allExited` the sandbox goes too (killPodWithSyncResult) and the
   * phase is terminal: the eviction's when one decided it, else Succeeded only if every main container exited
   * 0 (getPhase leaves terminated sidecars out).
   */
  containersExited(
    ref: PodRef,
    exits: ContainerExit[],
    allExited: boolean,
    evicted?: { reason: string; message: string },
  ): KubeObject | undefined {
    return this.update(ref, (status) => {
      for (const exit of exits) {
        const container = statusOf(status, exit.name);
        if (!container || container.state.terminated) continue;
        container.ready = false;
        container.started = false;
        container.state = {
          terminated: {
            exitCode: exit.exitCode,
            reason: exit.oomKilled ? 'OOMKilled' : exit.exitCode === 0 ? 'Completed' : 'Error',
            startedAt: container.state.running?.startedAt ?? exit.startedAt,
            finishedAt: apiTime(),
            containerID: container.containerID ?? `sim://${ref.uid}-${exit.name}`,
          },
        };
      }
      if (allExited) {
        const sandbox = status.conditions?.find((c) => c.type === 'PodReadyToStartContainers');
        if (sandbox && sandbox.status !== 'False') {
          sandbox.status = 'False';
          sandbox.lastTransitionTime = apiTime();
        }
        if (evicted) {
          status.phase = 'Failed';
          status.reason = evicted.reason;
          status.message = evicted.message;
        } else {
          status.phase = (status.containerStatuses ?? []).every((cs) => cs.state.terminated?.exitCode === 0)
            ? 'Succeeded'
            : 'Failed';
        }
      }
      // A terminal phase names itself (PodCompleted, PodFailed); otherwise some container is not ready.
      setReady(
        status.conditions,
        false,
        !allExited ? 'ContainersNotReady' : status.phase === 'Failed' ? 'PodFailed' : 'PodCompleted',
      );
    });
  }

  /**
   * Past the active deadline ShouldEvict makes the phase Failed, so Ready turns False (PodFailed) at once,
   * but mergePodStatus holds back the terminal phase, reason and message while containers could still run.
   */
  deadlineExceeded(ref: PodRef): KubeObject | undefined {
    return this.update(ref, (status) => setReady(status.conditions, false, 'PodFailed', true));
  }

  /**
   * syncPod's canBeDeleted: the kubelet deletes the object with grace 0 and its UID as precondition. A
   * finalizer holds it (its grace becomes 0 and it waits); true once the object is gone.
   */
  deletePod(ref: PodRef): boolean {
    const pod = this.store.get('pods', ref.namespace, ref.name);
    if (!pod || pod.metadata.uid !== ref.uid) return true;
    if (pod.metadata.finalizers?.length) {
      if (pod.metadata.deletionGracePeriodSeconds !== 0) {
        pod.metadata.deletionGracePeriodSeconds = 0;
        this.store.update('pods', pod);
      }
      return false;
    }
    this.store.remove('pods', pod);
    return true;
  }
}
