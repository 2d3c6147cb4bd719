// The object store: one resourceVersion counter across all objects, an event history to resume
// watches from, and 410 Expired for a version older than the history keeps.
import { ApiError, conflict, notFound } from './status.ts';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generateName?: string;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // Spec and status are the API's JSON; the sim reads the fields it needs.
  [key: string]: any;
}

export type Resource =
  | 'pods'
  | 'events'
  | 'namespaces'
  | 'nodes'
  | 'deployments'
  | 'replicasets'
  | 'services'
  | 'endpointslices'
  | 'configmaps'
  | 'serviceaccounts'
  | 'clusterroles'
  | 'clusterrolebindings'
  | 'gatewayclasses'
  | 'gateways'
  | 'httproutes'
  | 'ingresses'
  | 'ingressclasses';
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  type: EventType;
  resource: Resource;
  object: KubeObject;
}

export interface Watcher {
  resource: Resource;
  namespace: string | null;
  matches(object: KubeObject): boolean;
  send(event: StoredEvent): void;
  /** Not held back by eventDelayMs (the delay-events fault). */
  undelayed?: boolean;
}

const HISTORY_LIMIT = 10_000;

const keyOf = (resource: Resource, namespace: string | undefined, name: string) =>
  `${resource}/${namespace ?? ''}/${name}`;
const clone = <T>(value: T): T => structuredClone(value);
/** A dry run's answer: no new resourceVersion, no event, nothing kept. */
const wouldBe = (object: KubeObject, resourceVersion: string): KubeObject => {
  const answer = clone(object);
  answer.metadata.resourceVersion = resourceVersion;
  return answer;
};

export class Store {
  private rv = 100;
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: StoredEvent[] = [];
  readonly watchers = new Set<Watcher>();
  /** Faults: events are handed to watchers this many ms late. */
  eventDelayMs = 0;

  get currentVersion(): string {
    return String(this.rv);
  }

  get(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.objects.get(keyOf(resource, namespace, name));
    return found && clone(found);
  }

  mustGet(resource: Resource, namespace: string | undefined, name: string): KubeObject {
    const found = this.get(resource, namespace, name);
    if (!found) throw notFound(resource, name);
    return found;
  }

  list(resource: Resource, namespace: string | null, matches: (o: KubeObject) => boolean = () => true): KubeObject[] {
    const items: KubeObject[] = [];
    for (const [key, object] of this.objects) {
      if (!key.startsWith(`${resource}/`)) continue;
      if (namespace !== null && object.metadata.namespace !== namespace) continue;
      if (matches(object)) items.push(clone(object));
    }
    return items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** `dryRun`: every check made, nothing stored (DryRunnableStorage): the answer is the object as it would be, without a resourceVersion. */
  create(resource: Resource, object: KubeObject, dryRun = false): KubeObject {
    const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
    if (this.objects.has(key))
      throw new ApiError(409, 'AlreadyExists', `${resource} "${object.metadata.name}" already exists`, {
        name: object.metadata.name,
        kind: resource,
      });
    if (dryRun) return wouldBe(object, '');
    return this.commit('ADDED', resource, key, object);
  }

  /** Replaces an object; with expectedVersion set, a stale write is a 409 Conflict. `dryRun`: checked, not stored, the version unchanged. */
  update(resource: Resource, object: KubeObject, expectedVersion?: string, dryRun = false): KubeObject {
    const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, object.metadata.name);
    if (expectedVersion && current.metadata.resourceVersion !== expectedVersion) {
      throw conflict(
        resource,
        object.metadata.name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    if (dryRun) return wouldBe(object, current.metadata.resourceVersion);
    return this.commit('MODIFIED', resource, key, object);
  }

  remove(resource: Resource, object: KubeObject, dryRun = false): KubeObject {
    const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, object.metadata.name);
    if (dryRun) return wouldBe(object, current.metadata.resourceVersion);
    return this.commit('DELETED', resource, key, object);
  }

  private commit(type: EventType, resource: Resource, key: string, object: KubeObject): KubeObject {
    const stored = clone(object);
    stored.metadata.resourceVersion = String(++this.rv);
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, stored);
    const event: StoredEvent = { rv: this.rv, type, resource, object: stored };
    this.history.push(event);
    if (this.history.length > HISTORY_LIMIT) this.history.shift();
    this.deliver(event);
    return clone(stored);
  }

  private deliver(event: StoredEvent): void {
    for (const watcher of this.watchers) {
      if (watcher.resource !== event.resource) continue;
      if (watcher.namespace !== null && event.object.metadata.namespace !== watcher.namespace) continue;
      if (!watcher.matches(event.object)) continue;
      if (this.eventDelayMs > 0 && !watcher.undelayed) setTimeout(() => watcher.send(event), this.eventDelayMs);
      else watcher.send(event);
    }
  }

  /** Events after `fromVersion`, or null when that version is older than the history keeps. */
  eventsSince(fromVersion: number, watcher: Omit<Watcher, 'send'>): StoredEvent[] | null {
    const oldest = this.history[0]?.rv ?? this.rv + 1;
    if (fromVersion < oldest - 1 && fromVersion < this.rv) return null;
    return this.history.filter(
      (e) =>
        e.rv > fromVersion &&
        e.resource === watcher.resource &&
        (watcher.namespace === null || e.object.metadata.namespace === watcher.namespace) &&
        watcher.matches(e.object),
    );
  }
}
