// The ReplicaSet controller (pkg/controller/replicaset/replica_set.go, 1.34): claim pods by selector,
// create or delete to reach spec.replicas (manageReplicas), write the status (calculateStatus).
import {
  Controller,
  controllerOf,
  controllerRef,
  isPodActive,
  isPodAvailable,
  isPodReady,
  keyOf,
  sameJson,
  splitKey,
} from './controller-queue.ts';
import { recordEvent } from './events.ts';
import { getPodsToDelete } from './pod-ranking.ts';
import type { PodRegistry } from './pods.ts';
import type { KubeObject, Store } from './store.ts';
import { selectorMatches } from './workloads.ts';

const COMPONENT = 'replicaset-controller';

export class ReplicaSetController extends Controller {
  private readonly pods: PodRegistry;
  protected readonly syncHandler = this.sync;

  constructor(store: Store, pods: PodRegistry) {
    super(COMPONENT, store);
    this.pods = pods;
    this.addEventHandler('replicasets', (e) => this.enqueue(e.object));
    // A pod's owner, or for an orphan every ReplicaSet whose selector matches it, needs a sync.
    this.addEventHandler('pods', (e) => this.enqueueOwnerOrAdopters(e.object, 'ReplicaSet', 'replicasets'));
  }

  private sync(key: string): void {
    const [namespace, name] = splitKey(key);
    const rs = this.store.get('replicasets', namespace, name);
    if (!rs) return;
    const filteredPods = this.claimPods(rs).filter(isPodActive);
    if (!rs.metadata.deletionTimestamp) this.manageReplicas(filteredPods, rs);
    this.updateStatus(rs, filteredPods);
  }

  /** ControllerRefManager.ClaimPods: owned pods that still match, and orphans that match (adopted). */
  private claimPods(rs: KubeObject): KubeObject[] {
    const claimed: KubeObject[] = [];
    for (const pod of this.store.list('pods', rs.metadata.namespace!)) {
      const owner = controllerOf(pod);
      const matches = selectorMatches(rs.spec.selector, pod.metadata.labels);
      if (owner && owner.uid !== rs.metadata.uid) continue;
      if (owner && matches) {
        claimed.push(pod);
        continue;
      }
      if (owner && !matches) {
        // Release: the pod no longer matches; drop our ownerReference.
        if (!pod.metadata.deletionTimestamp)
          this.pods.patch(pod.metadata.namespace!, pod.metadata.name, 'application/json-patch+json', [
            { op: 'test', path: '/metadata/uid', value: pod.metadata.uid },
            {
              op: 'replace',
              path: '/metadata/ownerReferences',
              value: (pod.metadata.ownerReferences as any[]).filter((r) => r.uid !== rs.metadata.uid),
            },
          ]);
        continue;
      }
      if (matches && !rs.metadata.deletionTimestamp && !pod.metadata.deletionTimestamp) {
        const adopted = this.pods.patch(pod.metadata.namespace!, pod.metadata.name, 'application/json-patch+json', [
          { op: 'test', path: '/metadata/uid', value: pod.metadata.uid },
          {
            op: 'add',
            path: '/metadata/ownerReferences',
            value: [...((pod.metadata.ownerReferences ?? []) as any[]), controllerRef(rs)],
          },
        ]);
        claimed.push(adopted);
      }
    }
    return claimed;
  }

  private manageReplicas(filteredPods: KubeObject[], rs: KubeObject): void {
    const diff = filteredPods.length - rs.spec.replicas;
    if (diff < 0) {
      for (let i = 0; i < -diff; i++) {
        const pod = this.pods.create(rs.metadata.namespace!, podFromTemplate(rs));
        recordEvent(this.store, rs, COMPONENT, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
      }
    } else if (diff > 0) {
      for (const pod of getPodsToDelete(filteredPods, this.relatedPods(rs), diff, Date.now())) {
        // DeletePod with no options: the pod's own terminationGracePeriodSeconds.
        this.pods.delete(pod.metadata.namespace!, pod.metadata.name, { preconditions: { uid: pod.metadata.uid } });
        recordEvent(this.store, rs, COMPONENT, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
      }
    }
  }

  /** getIndirectlyRelatedPods: the pods of every ReplicaSet with the same controller (the Deployment). */
  private relatedPods(rs: KubeObject): KubeObject[] {
    const owner = controllerOf(rs);
    const siblings = owner
      ? this.store
          .list('replicasets', rs.metadata.namespace!, (o) => controllerOf(o)?.uid === owner.uid)
          .map((o) => o.metadata.uid)
      : [rs.metadata.uid];
    return this.store.list('pods', rs.metadata.namespace!, (p) => siblings.includes(controllerOf(p)?.uid ?? ''));
  }

  /** calculateStatus (replica_set_utils.go), written only when it changed. */
  private updateStatus(rs: KubeObject, filteredPods: KubeObject[]): void {
    const minReadySeconds = rs.spec.minReadySeconds ?? 0;
    const now = Date.now();
    let fullyLabeled = 0,
      ready = 0,
      available = 0;
    for (const pod of filteredPods) {
      if (Object.entries(rs.spec.template.metadata?.labels ?? {}).every(([k, v]) => pod.metadata.labels?.[k] === v))
        fullyLabeled++;
      if (isPodReady(pod)) {
        ready++;
        if (isPodAvailable(pod, minReadySeconds, now)) available++;
      }
    }
    const status = {
      ...rs.status,
      replicas: filteredPods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata.generation,
    };
    if (!sameJson(status, rs.status)) {
      rs.status = status;
      this.store.update('replicasets', rs);
    }
    // A pod ready but not yet available is checked again when minReadySeconds has passed.
    if (minReadySeconds > 0 && ready !== available) this.queue.addAfter(keyOf(rs), minReadySeconds * 1000);
  }
}

/** controller.GetPodFromTemplate: the template's labels, annotations, finalizers and spec, generateName `<rs>-`. */
function podFromTemplate(rs: KubeObject): any {
  const template = rs.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      labels: { ...template.metadata?.labels },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(template.metadata?.finalizers ? { finalizers: [...template.metadata.finalizers] } : {}),
      ownerReferences: [controllerRef(rs)],
    },
    spec: structuredClone(template.spec),
  };
}
