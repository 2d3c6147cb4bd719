// The verification's calls that harness/kube has no function for (read a Deployment, list
// Services, the restartedAt patch), through the same retry within the outage budget; and every
// refusal for want of a right turned into the one sentence that names it.
import * as k8s from '@kubernetes/client-node';
import { TermlabError, isTermlabError } from '../../lib/errors.ts';
import { type Cluster, isNotFound, timeoutOptions, withRetry } from '../kube/index.ts';

const limit = (cluster: Cluster) => timeoutOptions(cluster.health.requestTimeoutMs);
const apps = (cluster: Cluster) => cluster.kc.makeApiClient(k8s.AppsV1Api);

/** `kubectl rollout restart`'s annotation on the pod template. */
export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/** A 403 as the right it lacks ("forbidden: cannot patch deployments in namespace shop"); anything else unchanged. */
export async function needing<T>(
  verb: string,
  resource: string,
  namespace: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isTermlabError(error) && error.context.status === 403) {
      // RBAC says "User ... cannot VERB resource"; an admission's 403 (PodSecurity, a webhook) says why in its own words.
      if (!/cannot |forbidden: User /i.test(error.message))
        throw new TermlabError(
          'API_REJECTED',
          `forbidden: the cluster refused to ${verb} ${resource} in namespace ${namespace}: ${error.message}`,
          { ...error.context, verb, resource, namespace },
          { cause: error },
        );
      throw new TermlabError(
        'API_REJECTED',
        `forbidden: cannot ${verb} ${resource} in namespace ${namespace} (manifests/rbac-verify.yaml lists every right termlab verify needs)`,
        { ...error.context, verb, resource, namespace },
        { cause: error },
      );
    }
    throw error;
  }
}

export async function readDeployment(
  cluster: Cluster,
  namespace: string,
  name: string,
): Promise<k8s.V1Deployment | null> {
  try {
    return await needing('get', 'deployments', namespace, () =>
      withRetry(cluster, `read deployment ${namespace}/${name}`, () =>
        apps(cluster).readNamespacedDeployment({ name, namespace }, limit(cluster)),
      ),
    );
  } catch (error) {
    if (isNotFound(error) || (isTermlabError(error) && error.context.status === 404)) return null;
    throw error;
  }
}

export async function listServices(cluster: Cluster, namespace: string): Promise<k8s.V1Service[]> {
  return (
    await needing('list', 'services', namespace, () =>
      withRetry(cluster, `list services in ${namespace}`, () =>
        cluster.core.listNamespacedService({ namespace }, limit(cluster)),
      ),
    )
  ).items;
}

/**
 * What `kubectl rollout restart` does: the template's restartedAt annotation set to now, as a JSON
 * patch guarded by the generation read (a concurrent change of the spec is not clobbered). Not the
 * resourceVersion: every status update moves it, and on a busy node (readiness flapping) the patch
 * lost that race, 422, and verify ended with exit 3 before acting. `dryRun`: the API checks the
 * right and the patch and changes nothing (verify's preflight).
 */
export async function patchRestartedAt(
  cluster: Cluster,
  namespace: string,
  deployment: k8s.V1Deployment,
  value: string,
  options: { dryRun?: boolean } = {},
): Promise<k8s.V1Deployment> {
  const name = deployment.metadata!.name!;
  const hasAnnotations = Boolean(deployment.spec?.template?.metadata?.annotations);
  const hasMetadata = Boolean(deployment.spec?.template?.metadata);
  const body = [
    { op: 'test', path: '/metadata/generation', value: deployment.metadata?.generation },
    ...(hasMetadata ? [] : [{ op: 'add', path: '/spec/template/metadata', value: {} }]),
    hasAnnotations
      ? { op: 'add', path: `/spec/template/metadata/annotations/${RESTARTED_AT.replace('/', '~1')}`, value }
      : { op: 'add', path: '/spec/template/metadata/annotations', value: { [RESTARTED_AT]: value } },
  ];
  const dryRun = options.dryRun ? { dryRun: 'All' } : {};
  try {
    return await needing('patch', 'deployments', namespace, () =>
      withRetry(cluster, `patch deployment ${namespace}/${name}${options.dryRun ? ' (dry run)' : ''}`, () =>
        apps(cluster).patchNamespacedDeployment({ name, namespace, body, ...dryRun }, limit(cluster)),
      ),
    );
  } catch (error) {
    // The test op failed: its spec changed since it was read (someone else is changing or rolling it).
    if (isTermlabError(error) && error.context.status === 422) {
      throw new TermlabError(
        'API_REJECTED',
        `deployment/${name} in namespace ${namespace} changed while verify was about to restart it (its generation is no longer ${deployment.metadata?.generation}): someone else changed its spec; verify a Deployment at rest (nothing was changed): ${error.message}`,
        { ...error.context },
        { cause: error },
      );
    }
    throw error;
  }
}

/** A Deployment's selector as a label selector string (matchLabels and matchExpressions). */
export function selectorString(selector: k8s.V1LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** Does a Service's selector pick pods with these labels (a Service without a selector picks none)? */
export function selects(service: k8s.V1Service, labels: Record<string, string>): boolean {
  const selector = Object.entries(service.spec?.selector ?? {});
  return selector.length > 0 && selector.every(([k, v]) => labels[k] === v);
}
