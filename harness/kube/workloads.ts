// Calls on Deployments, Services and collections (a rollout's objects): the same retry within the
// outage budget as the pod calls; NotFound is an answer.
import * as k8s from '@kubernetes/client-node';
import { timeoutOptions, type Cluster } from './connect.ts';
import { isNotFound } from './failures.ts';
import { getText } from './http.ts';
import { withRetry, type RetryOptions } from './retry.ts';

const limit = (cluster: Cluster) => timeoutOptions(cluster.health.requestTimeoutMs);
const apps = (cluster: Cluster) => cluster.kc.makeApiClient(k8s.AppsV1Api);

export async function createDeployment(
  cluster: Cluster,
  namespace: string,
  body: k8s.V1Deployment,
  options?: RetryOptions,
): Promise<k8s.V1Deployment> {
  return withRetry(
    cluster,
    `create deployment ${namespace}/${body.metadata!.name}`,
    () => apps(cluster).createNamespacedDeployment({ namespace, body }, limit(cluster)),
    options,
  );
}

export async function createService(
  cluster: Cluster,
  namespace: string,
  body: k8s.V1Service,
  options?: RetryOptions,
): Promise<k8s.V1Service> {
  return withRetry(
    cluster,
    `create service ${namespace}/${body.metadata!.name}`,
    () => cluster.core.createNamespacedService({ namespace, body }, limit(cluster)),
    options,
  );
}

/** Replaces the Deployment's pod template (a JSON patch): the rollout's trigger. */
export async function replaceDeploymentTemplate(
  cluster: Cluster,
  namespace: string,
  name: string,
  template: k8s.V1PodTemplateSpec,
  options?: RetryOptions,
): Promise<k8s.V1Deployment> {
  return withRetry(
    cluster,
    `patch deployment ${namespace}/${name}`,
    () =>
      apps(cluster).patchNamespacedDeployment(
        { name, namespace, body: [{ op: 'replace', path: '/spec/template', value: template }] },
        limit(cluster),
      ),
    options,
  );
}

/** Deletes with a UID precondition; dependents go by the garbage collector (Background). */
export async function deleteDeployment(
  cluster: Cluster,
  namespace: string,
  name: string,
  uid: string,
  options?: RetryOptions,
): Promise<'deleted' | 'gone'> {
  try {
    await withRetry(
      cluster,
      `delete deployment ${namespace}/${name}`,
      () =>
        apps(cluster).deleteNamespacedDeployment(
          { name, namespace, body: { preconditions: { uid }, propagationPolicy: 'Background' } },
          limit(cluster),
        ),
      options,
    );
    return 'deleted';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

export async function deleteService(
  cluster: Cluster,
  namespace: string,
  name: string,
  uid: string,
  options?: RetryOptions,
): Promise<'deleted' | 'gone'> {
  try {
    await withRetry(
      cluster,
      `delete service ${namespace}/${name}`,
      () => cluster.core.deleteNamespacedService({ name, namespace, body: { preconditions: { uid } } }, limit(cluster)),
      options,
    );
    return 'deleted';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

/** A collection's current resourceVersion (a list limited to one item): where its watch starts. */
export async function collectionVersion(
  cluster: Cluster,
  path: string,
  query: Record<string, string | undefined>,
  options?: RetryOptions,
): Promise<string> {
  const text = await withRetry(cluster, `list ${path}`, () => getText(cluster, path, { ...query, limit: 1 }), options);
  return (JSON.parse(text) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '0';
}

export const COLLECTIONS = {
  deployments: (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`,
  replicasets: (ns: string) => `/apis/apps/v1/namespaces/${ns}/replicasets`,
  pods: (ns: string) => `/api/v1/namespaces/${ns}/pods`,
  endpointslices: (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
} as const;

/** The names and UIDs of a collection's objects that match a label selector, with their labels and annotations. */
export async function listObjects(
  cluster: Cluster,
  path: string,
  labelSelector: string,
  options?: RetryOptions,
): Promise<
  {
    name: string;
    uid: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    deleting: boolean;
  }[]
> {
  const text = await withRetry(cluster, `list ${path}`, () => getText(cluster, path, { labelSelector }), options);
  const items =
    (
      JSON.parse(text) as {
        items?: {
          metadata?: {
            name?: string;
            uid?: string;
            labels?: Record<string, string>;
            annotations?: Record<string, string>;
            deletionTimestamp?: string;
          };
        }[];
      }
    ).items ?? [];
  return items.map((i) => ({
    name: i.metadata?.name ?? '',
    uid: i.metadata?.uid ?? '',
    labels: i.metadata?.labels ?? {},
    annotations: i.metadata?.annotations ?? {},
    deleting: Boolean(i.metadata?.deletionTimestamp),
  }));
}

export const SERVICES = (ns: string) => `/api/v1/namespaces/${ns}/services`;

export interface SliceEndpoint {
  pod: string | null;
  uid: string | null;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

/**
 * A Service's EndpointSlices as the API serves them now, each endpoint's conditions read as the API
 * defines them: ready unset is ready, serving unset follows ready, terminating unset is false.
 */
export async function listEndpointSlices(
  cluster: Cluster,
  namespace: string,
  service: string,
  options?: RetryOptions,
): Promise<{ slices: { name: string; resourceVersion: string }[]; endpoints: SliceEndpoint[] }> {
  const text = await withRetry(
    cluster,
    `list the EndpointSlices of service ${namespace}/${service}`,
    () =>
      getText(cluster, COLLECTIONS.endpointslices(namespace), {
        labelSelector: `kubernetes.io/service-name=${service}`,
      }),
    options,
  );
  type Raw = {
    metadata?: { name?: string; resourceVersion?: string };
    endpoints?:
      | {
          targetRef?: { name?: string; uid?: string };
          conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
        }[]
      | null;
  };
  const items = (JSON.parse(text) as { items?: Raw[] }).items ?? [];
  return {
    slices: items.map((i) => ({ name: i.metadata?.name ?? '', resourceVersion: i.metadata?.resourceVersion ?? '' })),
    endpoints: items.flatMap((i) =>
      (i.endpoints ?? []).map((e) => {
        const ready = e.conditions?.ready ?? true;
        return {
          pod: e.targetRef?.name ?? null,
          uid: e.targetRef?.uid ?? null,
          ready,
          serving: e.conditions?.serving ?? ready,
          terminating: e.conditions?.terminating ?? false,
        };
      }),
    ),
  };
}
