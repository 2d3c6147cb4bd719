// The watches of a verification, each started from its collection's current resourceVersion before
// anything is done: the Deployment, its ReplicaSets, its pods, the load pod, the Service's
// EndpointSlices and the namespace's pod Events. Each event is kept compactly with the harness time
// it arrived, and each watch's own life (a gap is evidence too). Each collection is listed first.
import { COLLECTIONS, collectionVersion, withRetry } from '../kube/index.ts';
import { getText } from '../kube/http.ts';
import type { RolloutPodEvent } from '../observation/rollout.ts';
import { apiTimeString } from '../run/clock.ts';
import { ObjectWatches, podEvent } from '../run/rollout-watch.ts';
import { needing } from './kube.ts';
import type { VerificationObservation } from '../observation/verification.ts';

type Evidence = VerificationObservation['evidence'];
type Raw = Record<string, any>;
type Resource = VerificationObservation['evidence']['watchLifecycle'][number]['resource'];

export interface WatchTargets {
  deployment: string;
  /** The Deployment's selector as a label selector. */
  podSelector: string;
  /** The load pod's label selector (its run label). */
  loadSelector: string;
  service: string;
}

export class VerifyWatches extends ObjectWatches<Resource, Evidence> {
  readonly evidence: Evidence = {
    deploymentEvents: [],
    replicaSetEvents: [],
    podEvents: [],
    sliceEvents: [],
    kubeEvents: [],
    watchLifecycle: [],
    podLogs: [],
    loadLog: null,
  };
  onPod: (pod: Raw, event: RolloutPodEvent) => void = () => {};

  async start(t: WatchTargets): Promise<void> {
    const ns = this.namespace;
    const targets: [Resource, string, Record<string, string>][] = [
      ['deployments', COLLECTIONS.deployments(ns), { fieldSelector: `metadata.name=${t.deployment}` }],
      ['replicasets', COLLECTIONS.replicasets(ns), { labelSelector: t.podSelector }],
      ['pods', COLLECTIONS.pods(ns), { labelSelector: t.podSelector }],
      ['load', COLLECTIONS.pods(ns), { labelSelector: t.loadSelector }],
      ['endpointslices', COLLECTIONS.endpointslices(ns), { labelSelector: `kubernetes.io/service-name=${t.service}` }],
      ['events', `/api/v1/namespaces/${ns}/events`, { fieldSelector: 'involvedObject.kind=Pod' }],
    ];
    await Promise.all(
      targets.map(async ([resource, path, query]) => {
        // A Deployment at rest sends no event: each collection's objects are listed first and kept as
        // ADDED at the list's time, and the watch goes on from the list's resourceVersion. Old Events are not wanted.
        let from: string;
        const kind = resource === 'load' ? 'pods' : resource;
        if (resource === 'events')
          from = await needing('list', kind, ns, () => collectionVersion(this.cluster, path, query));
        else {
          const list = JSON.parse(
            await needing('list', kind, ns, () =>
              withRetry(this.cluster, `list ${path}`, () => getText(this.cluster, path, query)),
            ),
          ) as { metadata?: { resourceVersion?: string }; items?: Raw[] };
          from = list.metadata?.resourceVersion ?? '0';
          for (const item of list.items ?? []) this.take(resource, 'ADDED', item);
        }
        await this.watch(resource, path, query, from);
      }),
    );
  }

  protected take(resource: Resource, type: RolloutPodEvent['type'], o: Raw): void {
    const receivedAt = this.clock.now();
    const base = { type, resourceVersion: String(o.metadata?.resourceVersion ?? ''), receivedAt };
    if (this.takeObject(resource, base, o)) {
      this.waiters.wake();
      return;
    }
    if (resource === 'pods' || resource === 'load') {
      // A team's pods carry no termlab role label: the watch they came from says which is the load.
      const event = podEvent(type, o, receivedAt, resource === 'load' ? 'load' : 'other');
      this.evidence.podEvents.push(event);
      this.onPod(o, event);
    } else if (type !== 'DELETED') {
      this.evidence.kubeEvents.push({
        receivedAt,
        type: o.type ?? null,
        reason: o.reason ?? null,
        message: o.message ?? null,
        involvedName: o.involvedObject?.name ?? null,
        involvedUid: o.involvedObject?.uid ?? null,
        firstTimestamp: apiTimeString(o.firstTimestamp),
        eventTime: o.eventTime ? String(o.eventTime instanceof Date ? o.eventTime.toISOString() : o.eventTime) : null,
      });
    }
    this.waiters.wake();
  }

  /** Keeps only the Events about pods this run saw (the namespace may hold other teams' pods). */
  keepOwnEvents(): void {
    const uids = new Set(this.evidence.podEvents.map((e) => e.uid));
    this.evidence.kubeEvents = this.evidence.kubeEvents.filter(
      (e) => e.involvedUid !== null && uids.has(e.involvedUid),
    );
  }
}
