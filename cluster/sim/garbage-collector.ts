// The garbage collector (pkg/controller/garbagecollector/garbagecollector.go, 1.34): dependents whose
// owners are gone are deleted (attemptToDeleteItem), an owner deleted in the foreground waits for its
// blocking dependents (processDeletingDependentsItem), and an orphaning owner first strips its
// ownerReference from every dependent (orphanDependents).
import { inform, WorkQueue } from './controller-queue.ts';
import { FOREGROUND_FINALIZER, type ObjectRegistry, ORPHAN_FINALIZER } from './objects.ts';
import type { PodRegistry } from './pods.ts';
import type { KubeObject, Resource, Store } from './store.ts';

const COMPONENT = 'garbage-collector';
const KIND_RESOURCE: Record<string, Resource> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  Service: 'services',
  Pod: 'pods',
  EndpointSlice: 'endpointslices',
};
const TRACKED: Resource[] = ['deployments', 'replicasets', 'services', 'pods', 'endpointslices'];
type OwnerRef = {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
};
const refsOf = (o: KubeObject): OwnerRef[] => (o.metadata.ownerReferences ?? []) as OwnerRef[];
const isDeletingDependents = (o: KubeObject) =>
  Boolean(o.metadata.deletionTimestamp && o.metadata.finalizers?.includes(FOREGROUND_FINALIZER));

export class GarbageCollector {
  private readonly store: Store;
  private readonly objects: ObjectRegistry;
  private readonly pods: PodRegistry;
  private readonly attemptToDelete: WorkQueue;
  private readonly attemptToOrphan: WorkQueue;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(store: Store, objects: ObjectRegistry, pods: PodRegistry) {
    this.store = store;
    this.objects = objects;
    this.pods = pods;
    this.attemptToDelete = new WorkQueue(`${COMPONENT} attemptToDelete`, (key) => this.attemptToDeleteItem(key));
    this.attemptToOrphan = new WorkQueue(`${COMPONENT} attemptToOrphan`, (key) => this.orphanDependents(key));
    for (const resource of TRACKED)
      this.unsubscribe.push(inform(store, resource, (e) => this.observe(resource, e.type, e.object)));
  }

  stop(): void {
    for (const u of this.unsubscribe) u();
    this.attemptToDelete.stop();
    this.attemptToOrphan.stop();
  }

  /** processGraphChanges, reduced to what the sim needs: which items to look at after a change. */
  private observe(resource: Resource, type: string, o: KubeObject): void {
    const key = itemKey(resource, o);
    if (type === 'DELETED') {
      for (const dependent of this.dependentsOf(o))
        this.attemptToDelete.add(itemKey(dependent.resource, dependent.object));
      // An owner deleting in the foreground may now have no blocking dependents left.
      for (const ref of refsOf(o)) {
        const owner = this.findOwner(o.metadata.namespace!, ref);
        if (owner && isDeletingDependents(owner.object))
          this.attemptToDelete.add(itemKey(owner.resource, owner.object));
      }
      return;
    }
    if (o.metadata.deletionTimestamp && o.metadata.finalizers?.includes(ORPHAN_FINALIZER))
      this.attemptToOrphan.add(key);
    if (isDeletingDependents(o)) this.attemptToDelete.add(key);
    // A new dependent whose owner is already gone (or going in the foreground) is collected too.
    if (type === 'ADDED' && refsOf(o).length) this.attemptToDelete.add(key);
  }

  private dependentsOf(owner: KubeObject): { resource: Resource; object: KubeObject; ref: OwnerRef }[] {
    const found: { resource: Resource; object: KubeObject; ref: OwnerRef }[] = [];
    for (const resource of TRACKED) {
      for (const object of this.store.list(resource, owner.metadata.namespace ?? null, (x) =>
        refsOf(x).some((r) => r.uid === owner.metadata.uid),
      )) {
        found.push({ resource, object, ref: refsOf(object).find((r) => r.uid === owner.metadata.uid)! });
      }
    }
    return found;
  }

  private findOwner(namespace: string, ref: OwnerRef): { resource: Resource; object: KubeObject } | undefined {
    const resource = KIND_RESOURCE[ref.kind];
    if (!resource) return undefined;
    const object = this.store.get(resource, namespace, ref.name);
    return object?.metadata.uid === ref.uid ? { resource, object } : undefined;
  }

  private load(key: string): { resource: Resource; object: KubeObject } | undefined {
    const [resource, namespace, name, uid] = key.split('/') as [Resource, string, string, string];
    const object = this.store.get(resource, namespace, name);
    return object?.metadata.uid === uid ? { resource, object } : undefined;
  }

  /** attemptToDeleteItem. */
  private attemptToDeleteItem(key: string): void {
    const item = this.load(key);
    if (!item) return;
    const { resource, object } = item;
    if (object.metadata.deletionTimestamp && !isDeletingDependents(object)) return;
    if (isDeletingDependents(object)) return this.processDeletingDependentsItem(resource, object);
    const refs = refsOf(object);
    if (!refs.length) return;
    const solid: OwnerRef[] = [],
      dangling: OwnerRef[] = [],
      waiting: OwnerRef[] = [];
    for (const ref of refs) {
      const owner = this.findOwner(object.metadata.namespace!, ref);
      if (!owner) dangling.push(ref);
      else if (isDeletingDependents(owner.object)) waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length) {
      if (dangling.length || waiting.length) {
        const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
        this.setOwnerReferences(
          resource,
          object,
          refs.filter((r) => !drop.has(r.uid)),
        );
      }
      return;
    }
    const hasDependents = this.dependentsOf(object).length > 0;
    let policy = waiting.length && hasDependents ? 'Foreground' : 'Background';
    if (policy === 'Background' && object.metadata.finalizers?.includes(ORPHAN_FINALIZER)) policy = 'Orphan';
    if (policy === 'Background' && object.metadata.finalizers?.includes(FOREGROUND_FINALIZER)) policy = 'Foreground';
    try {
      this.objects.delete(resource, object.metadata.namespace!, object.metadata.name, {
        propagationPolicy: policy,
        preconditions: { uid: object.metadata.uid },
      });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
    }
  }

  /** processDeletingDependentsItem: delete the blocking dependents; once none is left, drop the finalizer. */
  private processDeletingDependentsItem(resource: Resource, owner: KubeObject): void {
    const blocking = this.dependentsOf(owner).filter((d) => d.ref.blockOwnerDeletion);
    if (!blocking.length) return this.objects.removeFinalizer(resource, owner, FOREGROUND_FINALIZER);
    for (const d of blocking)
      if (!d.object.metadata.deletionTimestamp || isDeletingDependents(d.object))
        this.attemptToDelete.add(itemKey(d.resource, d.object));
  }

  /** orphanDependents, then the orphan finalizer goes. */
  private orphanDependents(key: string): void {
    const item = this.load(key);
    if (!item?.object.metadata.finalizers?.includes(ORPHAN_FINALIZER)) return;
    for (const d of this.dependentsOf(item.object)) {
      this.setOwnerReferences(
        d.resource,
        d.object,
        refsOf(d.object).filter((r) => r.uid !== item.object.metadata.uid),
      );
    }
    this.objects.removeFinalizer(item.resource, item.object, ORPHAN_FINALIZER);
  }

  private setOwnerReferences(resource: Resource, object: KubeObject, refs: OwnerRef[]): void {
    if (resource === 'pods') {
      this.pods.patch(object.metadata.namespace!, object.metadata.name, 'application/json-patch+json', [
        { op: 'test', path: '/metadata/uid', value: object.metadata.uid },
        { op: 'add', path: '/metadata/ownerReferences', value: refs },
      ]);
      return;
    }
    const current = this.store.get(resource, object.metadata.namespace, object.metadata.name);
    if (!current || current.metadata.uid !== object.metadata.uid) return;
    if (refs.length) current.metadata.ownerReferences = refs;
    else delete current.metadata.ownerReferences;
    this.store.update(resource, current);
  }
}

const itemKey = (resource: Resource, o: KubeObject) =>
  `${resource}/${o.metadata.namespace ?? ''}/${o.metadata.name}/${o.metadata.uid}`;
