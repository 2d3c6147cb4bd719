// A rollout's four watches (Deployment, ReplicaSets, Pods, EndpointSlices), started before the
// load, each event kept compactly with the harness time it arrived and each watch's own life.
import { COLLECTIONS, collectionVersion, type Cluster, WatchStream } from '../kube/index.ts';
import type { RolloutObservation, RolloutPodEvent } from '../observation/rollout.ts';
import { ROLE_LABEL } from '../scenario/render-rollout.ts';
import { LAB_MODE_ENV } from '../../server/contract.ts';
import { apiTimeString, type RunClock } from './clock.ts';
import { containerStates } from './watch.ts';

type Evidence = RolloutObservation['evidence'];
type Raw = Record<string, any>;
type Resource = 'deployments' | 'replicasets' | 'pods' | 'endpointslices';

const labModeOf = (c: Raw) => (c.env ?? []).find((e: Raw) => e.name === LAB_MODE_ENV)?.value ?? null;
export const liveContainers = (spec: Raw | undefined) =>
  (spec?.containers ?? []).map((c: Raw) => ({
    name: String(c.name),
    image: String(c.image ?? ''),
    lifecycle: c.lifecycle ? (JSON.parse(JSON.stringify(c.lifecycle)) as Record<string, unknown>) : null,
    labMode: labModeOf(c),
  }));

const roleOf = (p: Raw): RolloutPodEvent['role'] => {
  const role = p.metadata?.labels?.[ROLE_LABEL];
  return role === 'lab' || role === 'load' ? role : 'other';
};

/** A pod as a watch event shows it, compactly; `role` when the caller knows it better than the label. */
export function podEvent(
  type: RolloutPodEvent['type'],
  p: Raw,
  receivedAt: RolloutPodEvent['receivedAt'],
  role = roleOf(p),
): RolloutPodEvent {
  return {
    type,
    resourceVersion: String(p.metadata?.resourceVersion ?? ''),
    receivedAt,
    name: String(p.metadata?.name ?? ''),
    uid: String(p.metadata?.uid ?? ''),
    role,
    templateHash: p.metadata?.labels?.['pod-template-hash'] ?? null,
    phase: p.status?.phase ?? null,
    ready: (p.status?.conditions ?? []).some((c: Raw) => c.type === 'Ready' && c.status === 'True'),
    creationTimestamp: apiTimeString(p.metadata?.creationTimestamp),
    deletionTimestamp: apiTimeString(p.metadata?.deletionTimestamp),
    deletionGracePeriodSeconds: p.metadata?.deletionGracePeriodSeconds ?? null,
    containers: containerStates(p),
    spec: liveContainers(p.spec),
  };
}

type EventBase = { type: RolloutPodEvent['type']; resourceVersion: string; receivedAt: RolloutPodEvent['receivedAt'] };
type Events = RolloutObservation['evidence'];

/** The Deployment, ReplicaSet and EndpointSlice events a rollout and a verification keep alike. */
export function deploymentEvent(base: EventBase, o: Raw): Events['deploymentEvents'][number] {
  const st = o.status ?? {};
  return {
    ...base,
    generation: o.metadata?.generation ?? null,
    observedGeneration: st.observedGeneration ?? null,
    replicas: st.replicas ?? 0,
    updatedReplicas: st.updatedReplicas ?? 0,
    readyReplicas: st.readyReplicas ?? 0,
    availableReplicas: st.availableReplicas ?? 0,
    unavailableReplicas: st.unavailableReplicas ?? 0,
  };
}

export function replicaSetEvent(base: EventBase, o: Raw): Events['replicaSetEvents'][number] {
  const st = o.status ?? {};
  return {
    ...base,
    name: String(o.metadata?.name ?? ''),
    uid: String(o.metadata?.uid ?? ''),
    templateHash: o.metadata?.labels?.['pod-template-hash'] ?? null,
    revision: o.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? null,
    replicas: st.replicas ?? 0,
    readyReplicas: st.readyReplicas ?? 0,
    availableReplicas: st.availableReplicas ?? 0,
    deletionTimestamp: apiTimeString(o.metadata?.deletionTimestamp),
  };
}

export function sliceEvent(base: EventBase, o: Raw): Events['sliceEvents'][number] {
  return {
    ...base,
    name: String(o.metadata?.name ?? ''),
    endpoints: (o.endpoints ?? []).map((ep: Raw) => ({
      podUid: ep.targetRef?.uid ?? null,
      podName: ep.targetRef?.name ?? null,
      addresses: ep.addresses ?? [],
      ready: ep.conditions?.ready ?? null,
      serving: ep.conditions?.serving ?? null,
      terminating: ep.conditions?.terminating ?? null,
    })),
  };
}

/** Waiters woken on every event or poke: waitFor resolves true once its test holds, false at the deadline, a watch giving up or the signal. */
export class Waiters {
  private readonly waiters = new Set<() => void>();
  private readonly gaveUp: () => boolean;

  constructor(gaveUp: () => boolean) {
    this.gaveUp = gaveUp;
  }

  wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  waitFor(test: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const check = () => {
        if (test()) {
          done();
          resolve(true);
        } else if (this.gaveUp() || signal?.aborted) {
          done();
          resolve(false);
        }
      };
      const timer = setTimeout(() => {
        done();
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        signal?.removeEventListener('abort', check);
      };
      this.waiters.add(check);
      signal?.addEventListener('abort', check);
      check();
    });
  }
}

type Lifecycle = RolloutObservation['evidence']['watchLifecycle'][number];
/** The evidence every such set of watches keeps; `R`, the names of its watches. */
type WatchedEvidence<R extends string> = Pick<
  Events,
  'deploymentEvents' | 'replicaSetEvents' | 'podEvents' | 'sliceEvents'
> & { watchLifecycle: (Omit<Lifecycle, 'resource'> & { resource: R })[] };

/**
 * What a rollout's watches and a verification's share: each stream's own life kept as evidence, the
 * Deployment, ReplicaSet and EndpointSlice events kept alike, and the waiters woken on each.
 */
export abstract class ObjectWatches<R extends string, E extends WatchedEvidence<R>> {
  abstract readonly evidence: E;
  /** The latest Deployment object seen. */
  deployment: Raw | null = null;
  protected readonly streams: WatchStream<Raw>[] = [];
  protected readonly waiters = new Waiters(() => this.gaveUp);
  protected readonly cluster: Cluster;
  protected readonly namespace: string;
  protected readonly clock: RunClock;

  constructor(cluster: Cluster, namespace: string, clock: RunClock) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.clock = clock;
  }

  get gaveUp(): boolean {
    return this.evidence.watchLifecycle.some((l) => l.event === 'gave-up');
  }

  /** One watch from `from`: its events to take, its own life to the evidence; resolves once it answered. */
  protected async watch(resource: R, path: string, query: Record<string, string>, from: string): Promise<void> {
    const stream = new WatchStream<Raw>(this.cluster, { path, query }, from, {
      event: (type, object) => this.take(resource, type, object),
      life: (event, resourceVersion, detail) => {
        this.evidence.watchLifecycle.push({
          resource,
          event,
          at: this.clock.now(),
          resourceVersion,
          ...(detail ? { detail } : {}),
        });
        this.waiters.wake();
      },
    });
    this.streams.push(stream);
    await stream.start();
  }

  protected abstract take(resource: R, type: RolloutPodEvent['type'], o: Raw): void;

  /** Keeps a Deployment, ReplicaSet or EndpointSlice event; false for another resource's. */
  protected takeObject(resource: R, base: EventBase, o: Raw): boolean {
    if (resource === 'deployments') {
      this.deployment = o;
      this.evidence.deploymentEvents.push(deploymentEvent(base, o));
    } else if (resource === 'replicasets') this.evidence.replicaSetEvents.push(replicaSetEvent(base, o));
    else if (resource === 'endpointslices') this.evidence.sliceEvents.push(sliceEvent(base, o));
    else return false;
    return true;
  }

  waitFor(test: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.waiters.waitFor(test, timeoutMs, signal);
  }

  /** Wakes the waiters for a change that is not a watch event (a log line). */
  poke(): void {
    this.waiters.wake();
  }

  stop(): void {
    for (const s of this.streams) s.stop();
    this.waiters.wake();
  }
}

export class RolloutWatches extends ObjectWatches<Resource, Evidence> {
  readonly evidence: Evidence = {
    deploymentEvents: [],
    replicaSetEvents: [],
    podEvents: [],
    sliceEvents: [],
    watchLifecycle: [],
    podLogs: [],
    loadLog: null,
  };
  onPod: (type: RolloutPodEvent['type'], pod: Raw, event: RolloutPodEvent) => void = () => {};

  /** Starts all four from their collections' current versions; resolves once each answered. */
  async start(name: string, podSelector: string): Promise<void> {
    const ns = this.namespace;
    const targets: [Resource, Record<string, string>][] = [
      ['deployments', { fieldSelector: `metadata.name=${name}` }],
      ['replicasets', { labelSelector: podSelector }],
      ['pods', { labelSelector: podSelector }],
      ['endpointslices', { labelSelector: `kubernetes.io/service-name=${name}` }],
    ];
    await Promise.all(
      targets.map(async ([resource, query]) => {
        const path = COLLECTIONS[resource](ns);
        await this.watch(resource, path, query, await collectionVersion(this.cluster, path, query));
      }),
    );
  }

  protected take(resource: Resource, type: RolloutPodEvent['type'], o: Raw): void {
    const base = { type, resourceVersion: String(o.metadata?.resourceVersion ?? ''), receivedAt: this.clock.now() };
    if (!this.takeObject(resource, base, o)) {
      const event = podEvent(type, o, base.receivedAt);
      this.evidence.podEvents.push(event);
      this.onPod(type, o, event);
    }
    this.waiters.wake();
  }
}
