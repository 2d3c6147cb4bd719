// The controllers' plumbing: an informer (every change of a resource, from the store) feeding a
// rate-limited work queue of namespace/name keys, one sync at a time, as client-go's workqueue.
import type { KubeObject, Resource, Store, StoredEvent } from './store.ts';
import { selectorMatches } from './workloads.ts';

const RETRY_BASE_MS = 5;
const RETRY_MAX_MS = 1000;

export class WorkQueue {
  private readonly pending = new Set<string>();
  /** One delayed add per key: the earliest wins (workqueue's AddAfter keeps the earliest too). */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private readonly failures = new Map<string, number>();
  private scheduled = false;
  private stopped = false;
  private readonly name: string;
  private readonly sync: (key: string) => void;

  constructor(name: string, sync: (key: string) => void) {
    this.name = name;
    this.sync = sync;
  }

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { timer, at });
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.pending];
    this.pending.clear();
    for (const key of keys) {
      if (this.stopped) return;
      try {
        this.sync(key);
        this.failures.delete(key);
      } catch (error) {
        // A failed sync is retried with exponential backoff (workqueue.DefaultControllerRateLimiter).
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        if (n === 1 || n % 10 === 0)
          console.error(`${this.name}: sync ${key} failed (${n}): ${(error as Error).message}`);
        this.addAfter(key, Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** n));
      }
    }
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

export const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export function splitKey(key: string): [string, string] {
  const at = key.indexOf('/');
  return [key.slice(0, at), key.slice(at + 1)];
}

/**
 * Calls `handler` with every change of `resource`; returns the unsubscribe. `delayable: false` (the
 * scheduler, the kubelet): the delay-events fault stands for a slow watch to clients, not for them.
 */
export function inform(
  store: Store,
  resource: Resource,
  handler: (event: StoredEvent) => void,
  options: { delayable?: boolean } = {},
): () => void {
  const watcher = {
    resource,
    namespace: null,
    matches: () => true,
    send: handler,
    undelayed: options.delayable === false,
  };
  store.watchers.add(watcher);
  return () => store.watchers.delete(watcher);
}

/**
 * What each of pkg/controller's controllers is built from, as kube-controller-manager runs it (its
 * controller.Interface, named as cmd/kube-controller-manager/names: "deployment-controller", …):
 * informers whose event handlers put namespace/name keys on one rate-limited workqueue, and a
 * syncHandler that works one key at a time. A subclass sets syncHandler to its sync, as
 * NewDeploymentController does (`dc.syncHandler = dc.syncDeployment`), and adds its event handlers in
 * its constructor.
 */
export abstract class Controller {
  readonly name: string;
  protected readonly store: Store;
  protected readonly queue: WorkQueue;
  protected abstract readonly syncHandler: (key: string) => void;
  private readonly handlers: (() => void)[] = [];

  constructor(name: string, store: Store) {
    this.name = name;
    this.store = store;
    this.queue = new WorkQueue(name, (key) => this.syncHandler(key));
  }

  /** informer.AddEventHandler: `handler` sees every change of `resource` until stop. */
  protected addEventHandler(resource: Resource, handler: (event: StoredEvent) => void): void {
    this.handlers.push(inform(this.store, resource, handler));
  }

  /** The handler of the controller's own resource (enqueueDeployment, enqueueRS, onServiceUpdate): its key. */
  protected enqueue(o: KubeObject): void {
    this.queue.add(keyOf(o));
  }

  /**
   * A changed child's controller of `kind` (resolveControllerRef), or for an orphan every object of
   * `resource` whose selector matches its labels, that may adopt it (getPodReplicaSets,
   * getDeploymentsForReplicaSet): each enqueued, as the ReplicaSet controller's addPod and the
   * Deployment controller's addReplicaSet do.
   */
  protected enqueueOwnerOrAdopters(child: KubeObject, kind: string, resource: Resource): void {
    const owner = controllerOf(child);
    if (owner) {
      if (owner.kind === kind) this.queue.add(`${child.metadata.namespace}/${owner.name}`);
      return;
    }
    for (const o of this.store.list(resource, child.metadata.namespace!, (o) =>
      selectorMatches(o.spec.selector, child.metadata.labels),
    ))
      this.queue.add(keyOf(o));
  }

  /** The informers' handlers removed, then the queue shut down. */
  stop(): void {
    for (const off of this.handlers) off();
    this.queue.stop();
  }
}

/** The controller ownerReference of an object, if any (metav1.GetControllerOf). */
export function controllerOf(
  o: KubeObject,
): { apiVersion: string; kind: string; name: string; uid: string } | undefined {
  return ((o.metadata.ownerReferences ?? []) as any[]).find((r) => r.controller === true);
}

export function controllerRef(owner: KubeObject) {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const isPodReady = (pod: KubeObject): boolean =>
  ((pod.status?.conditions ?? []) as any[]).some((c) => c.type === 'Ready' && c.status === 'True');

/** controller.IsPodActive: not Succeeded or Failed, and not being deleted. */
export const isPodActive = (pod: KubeObject): boolean =>
  pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed' && !pod.metadata.deletionTimestamp;

/** podutil.IsPodAvailable: Ready for at least minReadySeconds. */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const ready = ((pod.status?.conditions ?? []) as any[]).find((c) => c.type === 'Ready');
  return Boolean(ready?.lastTransitionTime) && Date.parse(ready.lastTransitionTime) + minReadySeconds * 1000 < now;
}

/** Writes an object only when it changed: controllers must not feed their own informers forever. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
