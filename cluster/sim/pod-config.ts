// The kubelet's pod source (pkg/kubelet/config: the API source merged into ADD, DELETE, REMOVE and
// UPDATE operations for syncLoop), fed by an informer on pods. Each change is handed on once the store
// has told every watcher of it, so the kubelet's own writes follow the change they answer. The
// informer's watch rides the API like any client's (reflector.ts): an outage blinds it for a while.
import { inform } from './controller-queue.ts';
import { ApiReachability, KubeletPause } from './faults.ts';
import { PodWatchLink } from './reflector.ts';
import type { PodSpec } from './pod-types.ts';
import { NODE_NAME } from './ports.ts';
import type { KubeObject, Store } from './store.ts';

export interface PodHandlers {
  /** SyncLoop ADD: a pod bound to this node, seen for the first time. */
  add(pod: KubeObject): void;
  /** SyncLoop DELETE: a new deletionTimestamp (a first graceful delete, a shorter one, or the object gone at once). */
  deleting(pod: KubeObject): void;
  /** SyncLoop UPDATE of a deleting pod with no finalizer left: the kubelet may finish its delete. */
  releasable(pod: KubeObject): void;
  /** REMOVE: the object is gone. */
  removed(pod: KubeObject): void;
}

export function podConfig(
  store: Store,
  handlers: PodHandlers,
  reach = new ApiReachability(),
  pause = new KubeletPause(),
): () => void {
  const added = new Set<string>();
  /** The deletionTimestamp each pod last showed. */
  const deletions = new Map<string, string>();
  const change = (type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: KubeObject) => {
    const { uid, deletionTimestamp } = pod.metadata;
    const seen = deletions.get(uid);
    if (type === 'DELETED') {
      deletions.delete(uid);
      added.delete(uid);
      handlers.removed(pod);
    } else if (deletionTimestamp) deletions.set(uid, deletionTimestamp);
    if (deletionTimestamp && deletionTimestamp !== seen) return handlers.deleting(pod);
    if (type === 'DELETED') return;
    if (deletionTimestamp && !pod.metadata.finalizers?.length) return handlers.releasable(pod);
    if ((pod.spec as PodSpec).nodeName === NODE_NAME && !added.has(uid)) {
      added.add(uid);
      handlers.add(pod);
    }
  };
  const link = new PodWatchLink<{ type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }>(reach, pause, (e) =>
    queueMicrotask(() => change(e.type, e.object)),
  );
  // The scheduler and the kubelet are not slowed by the delay-events fault (a slow watch to clients).
  const unsubscribe = inform(store, 'pods', (e) => link.send(e), { delayable: false });
  return () => {
    unsubscribe();
    link.stop();
  };
}
