// What both reapers (`reap` for one owner, `reap --all-owners` for a class) share: the shape of
// their report and the one way a listed pod is taken. A pod is read again just before it goes, kept
// when it was replaced (another UID) or is no longer a candidate, released from the hold and deleted
// with its listed UID; "already gone" is never a failure (chainsaw: cleanup counts it as success).
import type * as k8s from '@kubernetes/client-node';
import { apiErrorText, deletePod, isNotFound, readPod, removeFinalizer, type Cluster } from '../kube/index.ts';
import { HOLD_FINALIZER } from './labels.ts';

export type ReapResult = 'deleted' | 'skipped' | 'failed' | 'would delete';

export interface ReapEntry {
  pod: string;
  run: string | null;
  result: ReapResult;
  why: string;
}

export interface ReapAllEntry extends ReapEntry {
  owner: string | null;
}

export interface TakeOptions {
  dryRun?: boolean;
  /** Why the pod as read now is no longer to be taken, or null when it still is. */
  stillWanted: (current: k8s.V1Pod) => string | null;
  /** The reason given when it is taken. */
  why: string;
}

export async function takePod(
  cluster: Cluster,
  namespace: string,
  listed: k8s.V1Pod,
  options: TakeOptions,
): Promise<{ result: ReapResult; why: string }> {
  const name = listed.metadata!.name!;
  let released = false;
  const gone = () =>
    released
      ? { result: 'deleted' as const, why: `${options.why}; released its hold` }
      : { result: 'skipped' as const, why: 'already gone' };
  try {
    const current = await readPod(cluster, namespace, name);
    if (!current) return gone();
    if (current.metadata?.uid !== listed.metadata?.uid)
      return { result: 'skipped', why: 'replaced by a new pod since the list' };
    const not = options.stillWanted(current);
    if (not) return { result: 'skipped', why: not };
    if (options.dryRun) return { result: 'would delete', why: options.why };
    // Removing the hold of a pod already being deleted is what ends it: that is our delete.
    if (current.metadata?.finalizers?.includes(HOLD_FINALIZER))
      released = (await removeFinalizer(cluster, namespace, name, HOLD_FINALIZER)) === 'removed';
    const deleted = await deletePod(cluster, namespace, name, listed.metadata!.uid!);
    return deleted === 'gone' ? gone() : { result: 'deleted', why: options.why };
  } catch (error) {
    if (isNotFound(error)) return gone();
    return { result: 'failed', why: `${apiErrorText(error)} (it will be tried again next time)` };
  }
}
