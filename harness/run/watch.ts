// The scenario's one pod watch, from creation to DELETED, as evidence: every event, the watch's
// own life (a gap is evidence too), and a GET of the pod after every gap, kept apart as a pod read.
import type * as k8s from '@kubernetes/client-node';
import { PodWatchStream, readPod, type Cluster, type PodEventType, type WatchLife } from '../kube/index.ts';
import type { PodRead, WatchEvent } from '../observation/schema.ts';
import { apiTimeString, type RunClock } from './clock.ts';

type Lifecycle = { event: WatchLife; at: ReturnType<RunClock['now']>; resourceVersion: string | null; detail?: string };

/** One thing seen of the pod: a watch event, or a read (pod null: the API said NotFound). */
export type Sighting =
  | { via: 'watch'; type: PodEventType; pod: k8s.V1Pod }
  | { via: 'read'; reason: PodRead['reason']; pod: k8s.V1Pod | null };

/** The containers' states as a watch event records them (pod and rollout observations alike). */
export const containerStates = (pod: k8s.V1Pod) => [
  ...(pod.status?.containerStatuses ?? []).map((c) => containerState(c)),
  // A native sidecar's status is in initContainerStatuses (version 5 on).
  ...(pod.status?.initContainerStatuses ?? []).map((c) => ({ ...containerState(c), init: true })),
];

function containerState(c: k8s.V1ContainerStatus): WatchEvent['containers'][number] {
  const state = c.state?.terminated
    ? 'terminated'
    : c.state?.running
      ? 'running'
      : c.state?.waiting
        ? 'waiting'
        : 'unknown';
  return {
    name: c.name,
    state,
    ready: Boolean(c.ready),
    ...(c.state?.terminated ? { exitCode: c.state.terminated.exitCode, reason: c.state.terminated.reason } : {}),
    ...(c.state?.waiting?.reason ? { reason: c.state.waiting.reason } : {}),
  } as WatchEvent['containers'][number];
}

/** Why the kubelet ended the pod on its own (status.reason, status.message: `DeadlineExceeded`), verbatim; null when none. */
const statusCause = (pod: k8s.V1Pod | null) => ({
  statusReason: pod?.status?.reason ?? null,
  statusMessage: pod?.status?.message ?? null,
});

function toWatchEvent(type: WatchEvent['type'], pod: k8s.V1Pod, receivedAt: WatchEvent['receivedAt']): WatchEvent {
  return {
    type,
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    receivedAt,
    uid: pod.metadata?.uid ?? null,
    phase: pod.status?.phase ?? null,
    conditions: (pod.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status })),
    deletionTimestamp: apiTimeString(pod.metadata?.deletionTimestamp),
    deletionGracePeriodSeconds: pod.metadata?.deletionGracePeriodSeconds ?? null,
    containers: containerStates(pod),
    startTime: apiTimeString(pod.status?.startTime),
    ...statusCause(pod),
  };
}

function toPodRead(reason: PodRead['reason'], pod: k8s.V1Pod | null, at: PodRead['at']): PodRead {
  return {
    reason,
    at,
    found: pod !== null,
    resourceVersion: pod?.metadata?.resourceVersion ?? null,
    uid: pod?.metadata?.uid ?? null,
    phase: pod?.status?.phase ?? null,
    deletionTimestamp: apiTimeString(pod?.metadata?.deletionTimestamp),
    deletionGracePeriodSeconds: pod?.metadata?.deletionGracePeriodSeconds ?? null,
    finalizers: pod?.metadata?.finalizers ?? [],
    containers: pod ? containerStates(pod) : [],
    ...statusCause(pod),
  };
}

export class PodWatch {
  /** Watch events and the pods they carried, index for index. */
  readonly events: WatchEvent[] = [];
  readonly pods: k8s.V1Pod[] = [];
  readonly lifecycle: Lifecycle[] = [];
  /** Pods read with GET after a gap or at the end: evidence of their own, never watch events. */
  readonly reads: PodRead[] = [];
  private readonly sightings: Sighting[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly stream: PodWatchStream;
  private readonly pendingReads = new Set<Promise<unknown>>();
  private readonly cluster: Cluster;
  private readonly namespace: string;
  private readonly name: string;
  private readonly uid: string;
  private readonly clock: RunClock;

  constructor(cluster: Cluster, namespace: string, name: string, uid: string, fromVersion: string, clock: RunClock) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.name = name;
    this.uid = uid;
    this.clock = clock;
    this.stream = new PodWatchStream(cluster, namespace, name, fromVersion, {
      event: (type, pod) => {
        this.pods.push(pod);
        this.events.push(toWatchEvent(type, pod, this.clock.now()));
        if (pod.metadata?.uid === this.uid) this.sightings.push({ via: 'watch', type, pod });
        this.wake();
      },
      life: (event, resourceVersion, detail, listed) => {
        this.lifecycle.push({ event, at: this.clock.now(), resourceVersion, ...(detail ? { detail } : {}) });
        // What the gap hid: the relist's own answer, or a read of the pod right after resuming.
        if (listed) this.record('watch-relisted', listed.find((p) => p.metadata?.uid === this.uid) ?? null);
        else if (event === 'resumed') this.track(this.read('watch-resumed'));
        this.wake();
      },
    });
  }

  /** Resolves once the API server has answered the watch (or the outage budget ran out). */
  start(): Promise<void> {
    return this.stream.start();
  }

  get gaveUp(): boolean {
    return this.lifecycle.some((l) => l.event === 'gave-up');
  }

  /** Reads the pod now and records it; a pod of another UID counts as ours gone. Never throws. */
  async read(reason: PodRead['reason']): Promise<PodRead | null> {
    try {
      const pod = await readPod(this.cluster, this.namespace, this.name);
      return this.record(reason, pod);
    } catch {
      return null;
    }
  }

  /** Reads started by the watch itself, so the scenario can wait for them before it ends. */
  async settle(): Promise<void> {
    await Promise.all([...this.pendingReads]);
  }

  private track(read: Promise<unknown>): void {
    this.pendingReads.add(read);
    void read.finally(() => this.pendingReads.delete(read));
  }

  private record(reason: PodRead['reason'], pod: k8s.V1Pod | null): PodRead {
    const read = toPodRead(reason, pod, this.clock.now());
    this.reads.push(read);
    const ours = pod && pod.metadata?.uid === this.uid ? pod : null;
    this.sightings.push({ via: 'read', reason, pod: ours });
    this.wake();
    return read;
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  /** Waits for a sighting that matches, the deadline, the watch giving up, or the abort signal. */
  waitFor(match: (s: Sighting) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<Sighting | null> {
    return new Promise((resolve) => {
      const check = () => {
        const found = this.sightings.find(match);
        if (found) {
          done();
          resolve(found);
        } else if (this.gaveUp || signal?.aborted) {
          done();
          resolve(null);
        }
      };
      const timer = setTimeout(() => {
        done();
        resolve(null);
      }, timeoutMs);
      const onAbort = () => check();
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
      };
      this.waiters.add(check);
      signal?.addEventListener('abort', onAbort);
      check();
    });
  }

  stop(): void {
    this.stream.stop();
    this.wake();
  }
}

export const isReady = (pod: k8s.V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
export const hasTerminated = (pod: k8s.V1Pod) =>
  pod.status?.containerStatuses?.some((c) => c.state?.terminated) ?? false;
/** Every container of the pod has ended, its sidecars too (a native sidecar ends after the app). */
export const allTerminated = (pod: k8s.V1Pod) => {
  const all = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  return all.length > 0 && all.every((c) => c.state?.terminated);
};
/** The pod is gone: a DELETED event, or a read that found no pod of our UID. */
export const isGone = (s: Sighting) => (s.via === 'watch' ? s.type === 'DELETED' : s.pod === null);
