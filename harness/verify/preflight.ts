// Before anything is made or changed: every write verify will make, sent once with dryRun=All. The
// API checks the right (RBAC), the object (validation, admission) and the precondition and changes
// nothing, so a right that is missing is named now ("forbidden: cannot patch deployments in
// namespace shop"), before a load pod has run and not halfway through the rollout. The reads that
// would otherwise fail quietly (a pod, a pod's log) are tried on a pod of the Deployment.
import type * as k8s from '@kubernetes/client-node';
import { isTermlabError } from '../../lib/errors.ts';
import { type Cluster, timeoutOptions, withRetry } from '../kube/index.ts';
import { needing, patchRestartedAt } from './kube.ts';
import type { VerifyRequest } from '../observation/verification.ts';
import type { ReadTarget } from './target.ts';

const DRY_RUN = 'All';

export interface PreflightObjects {
  loadPod: k8s.V1Pod;
  /** The temporary Service, when the plan makes one. */
  service: k8s.V1Service | null;
  /** delete-pod: the pod it will delete. */
  victim: { name: string; uid: string } | null;
}

/** A refusal other than 403 (a webhook that does not take dry runs, say) is left for the real call to meet; 404 on a name not yet made says the right is there. */
async function tryOnly<T>(call: () => Promise<T>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (isTermlabError(error) && error.context.status === 403) throw error;
  }
}

export async function preflight(
  cluster: Cluster,
  request: VerifyRequest,
  read: ReadTarget,
  objects: PreflightObjects,
): Promise<void> {
  const ns = request.namespace;
  const limit = timeoutOptions(cluster.health.requestTimeoutMs);
  const ask = <T>(verb: string, resource: string, what: string, call: () => Promise<T>) =>
    tryOnly(() => needing(verb, resource, ns, () => withRetry(cluster, what, call)));
  const dry = <T>(verb: string, resource: string, what: string, call: () => Promise<T>) =>
    ask(verb, resource, `${what} (dry run)`, call);
  const loadName = objects.loadPod.metadata!.name!;
  await dry('create', 'pods', `create pod ${ns}/${loadName}`, () =>
    cluster.core.createNamespacedPod({ namespace: ns, body: objects.loadPod, dryRun: DRY_RUN }, limit),
  );
  // The load pod's own delete at the end: RBAC answers before the name is looked up (404 = allowed).
  await dry('delete', 'pods', `delete pod ${ns}/${loadName}`, () =>
    cluster.core.deleteNamespacedPod({ name: loadName, namespace: ns, dryRun: DRY_RUN }, limit),
  );
  if (objects.service) {
    const name = objects.service.metadata!.name!;
    await dry('create', 'services', `create service ${ns}/${name}`, () =>
      cluster.core.createNamespacedService({ namespace: ns, body: objects.service!, dryRun: DRY_RUN }, limit),
    );
    await dry('delete', 'services', `delete service ${ns}/${name}`, () =>
      cluster.core.deleteNamespacedService({ name, namespace: ns, dryRun: DRY_RUN }, limit),
    );
  }
  if (request.action === 'rollout-restart') {
    await tryOnly(() =>
      patchRestartedAt(cluster, ns, read.deployment, new Date().toISOString().replace(/\.\d+Z$/, 'Z'), {
        dryRun: true,
      }),
    );
  } else if (objects.victim) {
    const { name, uid } = objects.victim;
    await dry('delete', 'pods', `delete pod ${ns}/${name}`, () =>
      cluster.core.deleteNamespacedPod(
        { name, namespace: ns, body: { preconditions: { uid } }, dryRun: DRY_RUN },
        limit,
      ),
    );
  }
  // Each terminating pod is read live, and the old pods' logs are followed: without these rights the
  // evidence would only be thinner, so they are asked for here, where their lack can be named.
  const pod = read.target.pods.find((p) => p.phase === 'Running') ?? read.target.pods[0];
  if (pod) {
    await ask('get', 'pods', `read pod ${ns}/${pod.name}`, () =>
      cluster.core.readNamespacedPod({ name: pod.name, namespace: ns }, limit),
    );
    await ask('get', 'pods/log', `read the log of pod ${ns}/${pod.name}`, () =>
      cluster.core.readNamespacedPodLog({ name: pod.name, namespace: ns, tailLines: 1 }, limit),
    );
  }
}
