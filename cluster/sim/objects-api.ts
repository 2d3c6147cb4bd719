// Routes for Services, Deployments, ReplicaSets, EndpointSlices and ConfigMaps: list, watch, get, create,
// replace, patch, delete, and the status and scale subresources.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ObjectRegistry } from './objects.ts';
import { applyPatch } from './patch.ts';
import { apiVersionOf, EDGE_RESOURCES, listKindOf, RESOURCES } from './resources.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { ApiError, badRequest, sendJson } from './status.ts';
import type { KubeObject, Resource, Store } from './store.ts';

export interface ObjectRoutes {
  store: Store;
  objects: ObjectRegistry;
  readBody(req: IncomingMessage): Promise<unknown>;
  listOrWatch(req: IncomingMessage, res: ServerResponse, url: URL, resource: Resource, namespace: string | null): void;
  one(req: IncomingMessage, res: ServerResponse, resource: Resource, object: KubeObject): void;
}

const COLLECTION = /^\/(?:api\/v1|apis\/([a-z0-9.-]+)\/v1)(?:\/namespaces\/([^/]+))?\/([a-z]+)$/;
const ITEM = /^\/(?:api\/v1|apis\/([a-z0-9.-]+)\/v1)\/namespaces\/([^/]+)\/([a-z]+)\/([^/]+)(?:\/(status|scale))?$/;
/** A cluster-scoped object (a GatewayClass, an IngressClass, a ClusterRole): no namespace in its path. */
const CLUSTER_ITEM = /^\/(?:api\/v1|apis\/([a-z0-9.-]+)\/v1)\/([a-z]+)\/([^/]+)(?:\/(status))?$/;
const SERVED: Resource[] = [
  'services',
  'deployments',
  'replicasets',
  'endpointslices',
  'configmaps',
  ...EDGE_RESOURCES,
];

/** The resource a path names, when served in that group and with (or, cluster-scoped, without) a namespace. */
function resourceOf(group: string | undefined, name: string, namespaced: boolean | null): Resource | null {
  const resource = SERVED.find((r) => r === name);
  if (!resource || RESOURCES[resource].group !== (group ?? '')) return null;
  return namespaced === null || RESOURCES[resource].namespaced === namespaced ? resource : null;
}

const DRY_RUN_VALUES = ['All'];

/**
 * `?dryRun=All` (or DeleteOptions.dryRun, as kubectl's `delete --dry-run=server` sends it): the
 * request is validated, defaulted and checked as a real one (names, preconditions, conflicts) and
 * answered as if done; nothing is stored, no watch hears of it. Any other value is refused as the
 * apiserver's ValidateDryRun does (422, naming the options kind).
 */
export function dryRunOf(url: URL, verb: 'Create' | 'Update' | 'Patch' | 'Delete', body?: unknown): boolean {
  const fromBody = (body as { dryRun?: unknown } | null | undefined)?.dryRun;
  const values = [...url.searchParams.getAll('dryRun'), ...(Array.isArray(fromBody) ? fromBody.map(String) : [])];
  if (values.some((v) => !DRY_RUN_VALUES.includes(v))) {
    throw new ApiError(
      422,
      'Invalid',
      `${verb}Options.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{${values.map((v) => JSON.stringify(v)).join(', ')}}: supported values: "All"`,
      { kind: `${verb}Options`, causes: [{ reason: 'FieldValueNotSupported', field: 'dryRun' }] },
    );
  }
  return values.length > 0;
}

/** autoscaling/v1 Scale for a Deployment or ReplicaSet (kubectl scale). */
function scaleOf(object: KubeObject) {
  const selector = Object.entries(object.spec.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: object.spec.replicas },
    status: { replicas: object.status?.replicas ?? 0, selector },
  };
}

/** True when the request was one of these routes (answered or thrown). */
export async function routeObjects(
  r: ObjectRoutes,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
  method: string,
): Promise<boolean> {
  let m = COLLECTION.exec(path);
  if (m) {
    // A namespaced kind may be listed across namespaces; a cluster-scoped one has no namespace path.
    const resource = resourceOf(m[1], m[3]!, m[2] ? true : null);
    if (!resource) return false;
    const namespace = m[2] ?? null;
    const clusterScoped = !RESOURCES[resource].namespaced;
    if (method === 'GET') {
      r.listOrWatch(req, res, url, resource, namespace);
      return true;
    }
    if (method === 'POST' && (namespace || clusterScoped)) {
      const dryRun = dryRunOf(url, 'Create');
      sendJson(res, 201, await r.objects.create(resource, namespace, await r.readBody(req), dryRun));
      return true;
    }
    if (method === 'DELETE' && (namespace || clusterScoped) && resource !== 'endpointslices') {
      // deletecollection: every object the selectors match, each with the request's DeleteOptions.
      const options = ((await r.readBody(req)) ?? {}) as any;
      const dryRun = dryRunOf(url, 'Delete', options);
      const labels = parseLabelSelector(url.searchParams.get('labelSelector'));
      const fields = parseFieldSelector(url.searchParams.get('fieldSelector'));
      const policy = url.searchParams.get('propagationPolicy');
      const items = r.store.list(resource, namespace, (o) => labels(o.metadata.labels) && fields(o));
      for (const o of items)
        r.objects.delete(resource, namespace ?? undefined, o.metadata.name, {
          ...options,
          ...(policy ? { propagationPolicy: policy } : {}),
          preconditions: { uid: o.metadata.uid },
          dryRun,
        });
      sendJson(res, 200, {
        kind: listKindOf(resource),
        apiVersion: apiVersionOf(resource),
        metadata: { resourceVersion: r.store.currentVersion },
        items,
      });
      return true;
    }
    throw new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method} ${path})`,
    );
  }
  let resource: Resource | null;
  let namespace: string | undefined;
  let name: string;
  let sub: string | undefined;
  if ((m = ITEM.exec(path))) {
    resource = resourceOf(m[1], m[3]!, true);
    [namespace, name, sub] = [m[2]!, m[4]!, m[5]];
  } else if ((m = CLUSTER_ITEM.exec(path))) {
    resource = resourceOf(m[1], m[2]!, false);
    [namespace, name, sub] = [undefined, m[3]!, m[4]];
  } else return false;
  if (!resource) return false;
  if (sub === 'scale' && resource !== 'deployments' && resource !== 'replicasets') return false;
  const contentType = req.headers['content-type'] ?? '';
  if (sub === 'scale') {
    if (method === 'GET') {
      sendJson(res, 200, scaleOf(r.store.mustGet(resource, namespace, name)));
      return true;
    }
    if (method === 'PUT' || method === 'PATCH') {
      const dryRun = dryRunOf(url, method === 'PUT' ? 'Update' : 'Patch');
      const current = r.store.mustGet(resource, namespace, name);
      const body = (await r.readBody(req)) as any;
      const scale = method === 'PUT' ? body : applyPatch(contentType, scaleOf(current), body);
      const replicas = scale?.spec?.replicas;
      if (!Number.isInteger(replicas) || replicas < 0)
        throw new ApiError(
          422,
          'Invalid',
          `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        );
      const updated = await r.objects.patch(
        resource,
        namespace,
        name,
        'application/merge-patch+json',
        { spec: { replicas } },
        undefined,
        dryRun,
      );
      sendJson(res, 200, scaleOf(updated));
      return true;
    }
  }
  if (method === 'GET') {
    r.one(req, res, resource, r.store.mustGet(resource, namespace, name));
    return true;
  }
  if (method === 'PUT') {
    const dryRun = dryRunOf(url, 'Update');
    sendJson(res, 200, await r.objects.replace(resource, namespace, name, await r.readBody(req), sub, dryRun));
    return true;
  }
  if (method === 'PATCH') {
    const dryRun = dryRunOf(url, 'Patch');
    sendJson(
      res,
      200,
      await r.objects.patch(resource, namespace, name, contentType, await r.readBody(req), sub, dryRun),
    );
    return true;
  }
  if (method === 'DELETE' && !sub) {
    const body = ((await r.readBody(req)) ?? {}) as any;
    if (typeof body !== 'object') throw badRequest('the body must be DeleteOptions');
    const fromQuery = url.searchParams.get('propagationPolicy');
    const orphan = url.searchParams.get('orphanDependents');
    const { code, body: answer } = r.objects.delete(resource, namespace, name, {
      ...body,
      ...(fromQuery ? { propagationPolicy: fromQuery } : {}),
      ...(orphan !== null ? { orphanDependents: orphan === 'true' } : {}),
      dryRun: dryRunOf(url, 'Delete', body),
    });
    sendJson(res, code, answer);
    return true;
  }
  throw new ApiError(
    405,
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource (${method} ${path})`,
  );
}
