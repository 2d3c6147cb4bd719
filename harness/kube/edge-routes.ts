// Calls on what the lab publishes at the edge (an HTTPRoute or an Ingress) and on the edge itself (its
// Service and pods in the Gateway's namespace): the same retry within the outage budget as the other
// calls; NotFound is an answer.
import * as k8s from '@kubernetes/client-node';
import { timeoutOptions, type Cluster } from './connect.ts';
import { isNotFound } from './failures.ts';
import { withRetry, type RetryOptions } from './retry.ts';

const limit = (cluster: Cluster) => timeoutOptions(cluster.health.requestTimeoutMs);
const custom = (cluster: Cluster) => cluster.kc.makeApiClient(k8s.CustomObjectsApi);
const networking = (cluster: Cluster) => cluster.kc.makeApiClient(k8s.NetworkingV1Api);
const GATEWAY_API = { group: 'gateway.networking.k8s.io', version: 'v1' };

export type RouteKind = 'httproute' | 'ingress';
type Raw = Record<string, any>;

/** Creates the route; its answer (uid among it) as the API gave it. */
export async function createRoute(
  cluster: Cluster,
  namespace: string,
  kind: RouteKind,
  body: Raw,
  options?: RetryOptions,
): Promise<Raw> {
  const what = `create ${kind} ${namespace}/${body.metadata?.name}`;
  return withRetry(
    cluster,
    what,
    async () =>
      kind === 'httproute'
        ? ((await custom(cluster).createNamespacedCustomObject(
            { ...GATEWAY_API, namespace, plural: 'httproutes', body },
            limit(cluster),
          )) as Raw)
        : ((await networking(cluster).createNamespacedIngress(
            { namespace, body: body as k8s.V1Ingress },
            limit(cluster),
          )) as unknown as Raw),
    options,
  );
}

/** Deletes with a UID precondition. */
export async function deleteRoute(
  cluster: Cluster,
  namespace: string,
  kind: RouteKind,
  name: string,
  uid: string,
  options?: RetryOptions,
): Promise<'deleted' | 'gone'> {
  const body = { preconditions: { uid } };
  try {
    await withRetry(
      cluster,
      `delete ${kind} ${namespace}/${name}`,
      () =>
        kind === 'httproute'
          ? custom(cluster).deleteNamespacedCustomObject(
              { ...GATEWAY_API, namespace, plural: 'httproutes', name, body },
              limit(cluster),
            )
          : networking(cluster).deleteNamespacedIngress({ namespace, name, body }, limit(cluster)),
      options,
    );
    return 'deleted';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

/** A Gateway as the API holds it, or null when there is none. */
export async function readGateway(
  cluster: Cluster,
  namespace: string,
  name: string,
  options?: RetryOptions,
): Promise<Raw | null> {
  try {
    return (await withRetry(
      cluster,
      `read gateway ${namespace}/${name}`,
      () => custom(cluster).getNamespacedCustomObject({ ...GATEWAY_API, namespace, plural: 'gateways', name }),
      options,
    )) as Raw;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** A Service, or null when there is none. */
export async function readService(
  cluster: Cluster,
  namespace: string,
  name: string,
  options?: RetryOptions,
): Promise<k8s.V1Service | null> {
  try {
    return await withRetry(
      cluster,
      `read service ${namespace}/${name}`,
      () => cluster.core.readNamespacedService({ namespace, name }, limit(cluster)),
      options,
    );
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}
