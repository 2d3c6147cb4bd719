// Calls on pods, events and nodes. Each one retries transient failures within the outage budget
// (retry.ts) and comes out as a TermlabError when it fails for good; NotFound is an answer.
import type * as k8s from '@kubernetes/client-node';
import { timeoutOptions, type Cluster } from './connect.ts';
import { isNotFound } from './failures.ts';
import { withRetry, type RetryOptions } from './retry.ts';

const limit = (cluster: Cluster) => timeoutOptions(cluster.health.requestTimeoutMs);

/**
 * Creates a pod. A create whose answer was lost is found by reading the pod back (onReadBack says so):
 * that pod may already be Ready, so a watch from its resourceVersion would never see it become so.
 */
export async function createPod(
  cluster: Cluster,
  namespace: string,
  body: k8s.V1Pod,
  options?: RetryOptions & { onReadBack?: () => void },
): Promise<k8s.V1Pod> {
  let tried = false;
  const name = body.metadata!.name!;
  return withRetry(
    cluster,
    `create pod ${namespace}/${name}`,
    async () => {
      try {
        return await cluster.core.createNamespacedPod({ namespace, body }, limit(cluster));
      } catch (error) {
        const conflict = (error as { code?: number }).code === 409;
        if (!(conflict && tried)) {
          tried = true;
          throw error;
        }
        const pod = await cluster.core.readNamespacedPod({ name, namespace }, limit(cluster));
        options?.onReadBack?.();
        return pod;
      }
    },
    options,
  );
}

/** The pod as the API holds it now, or null when it is gone. */
export async function readPod(
  cluster: Cluster,
  namespace: string,
  name: string,
  options?: RetryOptions,
): Promise<k8s.V1Pod | null> {
  try {
    return await withRetry(
      cluster,
      `read pod ${namespace}/${name}`,
      () => cluster.core.readNamespacedPod({ name, namespace }, limit(cluster)),
      options,
    );
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Deletes with a UID precondition; the answer is the pod with its deletionTimestamp, or 'gone'. */
export async function deletePod(
  cluster: Cluster,
  namespace: string,
  name: string,
  uid: string | null,
  options?: RetryOptions & { gracePeriodSeconds?: number },
): Promise<k8s.V1Pod | 'gone'> {
  try {
    // `kubectl delete --grace-period`: a grace for this delete only; the API may only shorten it later.
    const body = {
      ...(uid ? { preconditions: { uid } } : {}),
      ...(options?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
    };
    return await withRetry(
      cluster,
      `delete pod ${namespace}/${name}`,
      () => cluster.core.deleteNamespacedPod({ name, namespace, body }, limit(cluster)) as Promise<k8s.V1Pod>,
      options,
    );
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

export async function listPods(
  cluster: Cluster,
  namespace: string,
  selector: { labelSelector?: string; fieldSelector?: string } = {},
  options?: RetryOptions,
): Promise<k8s.V1PodList> {
  return withRetry(
    cluster,
    `list pods in ${namespace}`,
    () => cluster.core.listNamespacedPod({ namespace, ...selector }, limit(cluster)),
    options,
  );
}

export async function listEvents(
  cluster: Cluster,
  namespace: string,
  fieldSelector: string,
  options?: RetryOptions,
): Promise<k8s.CoreV1EventList> {
  return withRetry(
    cluster,
    `list events in ${namespace}`,
    () => cluster.core.listNamespacedEvent({ namespace, fieldSelector }, limit(cluster)),
    options,
  );
}

/** Times a guarded patch may meet a concurrent change before giving up. */
const FINALIZER_PATCH_TRIES = 3;

/** Removes one finalizer with a JSON patch guarded by a test, so a concurrent change is not clobbered. */
export async function removeFinalizer(
  cluster: Cluster,
  namespace: string,
  name: string,
  finalizer: string,
  options?: RetryOptions,
): Promise<'removed' | 'absent' | 'gone'> {
  for (let attempt = 1; ; attempt++) {
    const pod = await readPod(cluster, namespace, name, options);
    if (!pod) return 'gone';
    const index = (pod.metadata?.finalizers ?? []).indexOf(finalizer);
    if (index < 0) return 'absent';
    try {
      await withRetry(
        cluster,
        `remove finalizer ${finalizer} from ${namespace}/${name}`,
        () =>
          cluster.core.patchNamespacedPod(
            {
              name,
              namespace,
              body: [
                { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
                { op: 'remove', path: `/metadata/finalizers/${index}` },
              ],
            },
            limit(cluster),
          ),
        options,
      );
      return 'removed';
    } catch (error) {
      if (isNotFound(error)) return 'gone';
      // The test failed: the list changed between the read and the patch. Read again.
      const status = (error as { context?: { status?: number } }).context?.status;
      if (status === 422 && attempt < FINALIZER_PATCH_TRIES) continue;
      throw error;
    }
  }
}

/** Node name and container runtime of the node a pod runs on; null where RBAC does not allow it. */
export async function nodeInfo(
  cluster: Cluster,
  nodeName: string | undefined,
): Promise<{ nodeName: string | null; runtime: string | null }> {
  if (!nodeName) return { nodeName: null, runtime: null };
  try {
    const node = await withRetry(cluster, `read node ${nodeName}`, () =>
      cluster.core.readNode({ name: nodeName }, limit(cluster)),
    );
    return { nodeName, runtime: node.status?.nodeInfo?.containerRuntimeVersion ?? null };
  } catch {
    return { nodeName, runtime: null };
  }
}
