// The registry of the objects besides pods: create, replace, patch and delete for Deployments,
// ReplicaSets and Services, with the API server's deletion rules (DeleteOptions.propagationPolicy
// becomes the orphan / foregroundDeletion finalizer the garbage collector acts on).
import { randomUUID } from 'node:crypto';
import { generateName } from './names.ts';
import { applyPatch } from './patch.ts';
import type { PodRegistry } from './pods.ts';
import { apiVersionOf, EDGE_RESOURCES, RESOURCES } from './resources.ts';
import type { ServiceAllocator } from './services.ts';
import { ApiError, badRequest, conflict, invalid, notFound, statusObject } from './status.ts';
import type { KubeObject, Resource, Store } from './store.ts';
import { apiTime } from './time.ts';
import { prepareEdgeObject } from './edge-objects.ts';
import { prepareDeployment, prepareReplicaSet } from './workloads.ts';

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SERVICE_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface ObjectDeleteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** dryRun=All: every check, nothing done. */
  dryRun?: boolean;
}

/** What a user writes on the kinds that have no spec. */
const TOP_LEVEL_FIELDS: Partial<Record<Resource, string[]>> = {
  configmaps: ['data', 'binaryData'],
  serviceaccounts: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  clusterroles: ['rules', 'aggregationRule'],
  clusterrolebindings: ['roleRef', 'subjects'],
};

export class ObjectRegistry {
  private readonly store: Store;
  private readonly pods: PodRegistry;
  private readonly services: ServiceAllocator;

  constructor(store: Store, pods: PodRegistry, services: ServiceAllocator) {
    this.store = store;
    this.pods = pods;
    this.services = services;
  }

  private async prepare(resource: Resource, object: KubeObject, old?: KubeObject, dryRun = false): Promise<void> {
    if (resource === 'deployments' || resource === 'replicasets') {
      const { kind, group } = RESOURCES[resource];
      this.pods.prepareTemplate(`${kind}.${group}`, object.metadata.name, object.spec?.template, old?.spec?.template);
      if (resource === 'deployments') prepareDeployment(object, old);
      else prepareReplicaSet(object, old);
    } else if (resource === 'services') await this.services.prepare(object, old, dryRun);
    else if (resource === 'configmaps') validateConfigMap(object);
    else if (EDGE_RESOURCES.includes(resource)) prepareEdgeObject(object, old);
    else throw new ApiError(405, 'MethodNotAllowed', `the simulated cluster does not accept writes to ${resource}`);
  }

  /** `dryRun`: validated and defaulted (a Service's addresses picked, not taken), answered as if made; nothing stored. */
  async create(resource: Resource, namespace: string | null, body: any, dryRun = false): Promise<KubeObject> {
    const { kind, namespaced } = RESOURCES[resource];
    if (namespaced && !namespace) throw badRequest(`a ${kind} is namespaced: name its namespace in the path`);
    if (namespace && !this.store.get('namespaces', undefined, namespace)) throw notFound('namespaces', namespace);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`the body must be a ${kind} object`);
    if (body.kind !== undefined && body.kind !== kind)
      throw badRequest(`expected kind ${kind}, got ${JSON.stringify(body.kind)}`);
    const metadata = { ...(body.metadata ?? {}) };
    if (!metadata.name && metadata.generateName) metadata.name = generateName(metadata.generateName);
    const name = String(metadata.name ?? '');
    const pattern = resource === 'services' ? SERVICE_NAME : NAME;
    if (!pattern.test(name) || name.length > (resource === 'services' ? 63 : 253)) {
      throw invalid(
        kind,
        name,
        `metadata.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 ${resource === 'services' ? 'label (RFC 1035)' : 'subdomain'} is required`,
      );
    }
    if (namespaced && metadata.namespace && metadata.namespace !== namespace)
      throw badRequest(
        `the namespace of the object (${metadata.namespace}) does not match the namespace on the request (${namespace})`,
      );
    if (this.store.get(resource, namespace ?? undefined, name))
      throw new ApiError(
        409,
        'AlreadyExists',
        `${resource}${RESOURCES[resource].group ? `.${RESOURCES[resource].group}` : ''} "${name}" already exists`,
        { name, kind: resource },
      );
    const object: KubeObject = {
      ...structuredClone(body),
      apiVersion: apiVersionOf(resource),
      kind,
      metadata: { ...metadata, name, namespace, uid: randomUUID(), resourceVersion: '', creationTimestamp: apiTime() },
    };
    if (!namespaced) delete object.metadata.namespace;
    delete object.metadata.deletionTimestamp;
    delete object.metadata.deletionGracePeriodSeconds;
    await this.prepare(resource, object, undefined, dryRun);
    if (dryRun) return this.store.create(resource, object, true);
    try {
      return this.store.create(resource, object);
    } catch (error) {
      if (resource === 'services') this.services.released(object);
      throw error;
    }
  }

  /** A controller's create (no HTTP round trip): the same defaults, validation and identity. */
  createInternal(resource: Resource, object: KubeObject): KubeObject {
    const prepared = structuredClone(object);
    prepared.metadata = { ...prepared.metadata, uid: randomUUID(), resourceVersion: '', creationTimestamp: apiTime() };
    if (resource === 'replicasets') prepareReplicaSet(prepared);
    return this.store.create(resource, prepared);
  }

  /** PUT: the whole object; with `status`, the status subresource (only status changes). */
  async replace(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    body: any,
    subresource?: string,
    dryRun = false,
  ): Promise<KubeObject> {
    const old = this.store.mustGet(resource, namespace, name);
    if (!body || typeof body !== 'object') throw badRequest(`the body must be a ${RESOURCES[resource].kind} object`);
    if (body.metadata?.name !== undefined && body.metadata.name !== name)
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    if (body.metadata?.uid && body.metadata.uid !== old.metadata.uid) {
      throw conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${body.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    return this.write(resource, old, body, subresource, dryRun);
  }

  async patch(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: unknown,
    subresource?: string,
    dryRun = false,
  ): Promise<KubeObject> {
    const old = this.store.mustGet(resource, namespace, name);
    return this.write(resource, old, applyPatch(contentType, old, body), subresource, dryRun);
  }

  private async write(
    resource: Resource,
    old: KubeObject,
    body: any,
    subresource?: string,
    dryRun = false,
  ): Promise<KubeObject> {
    const next: KubeObject = structuredClone(old);
    const expected = body.metadata?.resourceVersion || undefined;
    if (subresource === 'status') {
      next.status = body.status;
    } else {
      // Identity and the system's fields stay; what a user may set comes from the body.
      for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
        if (body.metadata?.[field] === undefined || body.metadata?.[field] === null) delete next.metadata[field];
        else next.metadata[field] = body.metadata[field];
      }
      const fields = TOP_LEVEL_FIELDS[resource];
      if (fields) {
        // Kinds without a spec (core/v1 ConfigMap and ServiceAccount, rbac/v1): their own top-level fields.
        for (const field of fields)
          if (body[field] === undefined || body[field] === null) delete next[field];
          else next[field] = structuredClone(body[field]);
      } else next.spec = structuredClone(body.spec);
      if (!old.metadata.deletionTimestamp || resource !== 'services') await this.prepare(resource, next, old, dryRun);
    }
    return this.commitUpdate(resource, next, expected, dryRun);
  }

  /** An update; an object being deleted whose last finalizer went is removed, as the API server does. */
  commitUpdate(resource: Resource, next: KubeObject, expectedVersion?: string, dryRun = false): KubeObject {
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      const current = this.store.mustGet(resource, next.metadata.namespace, next.metadata.name);
      if (expectedVersion && current.metadata.resourceVersion !== expectedVersion)
        throw conflict(
          resource,
          next.metadata.name,
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      return this.remove(resource, next, dryRun);
    }
    return this.store.update(resource, next, expectedVersion, dryRun);
  }

  private remove(resource: Resource, object: KubeObject, dryRun = false): KubeObject {
    const removed = this.store.remove(resource, object, dryRun);
    if (resource === 'services' && !dryRun) this.services.released(removed);
    return removed;
  }

  /** DELETE (pkg/registry/generic/registry/store.go Delete): finalizers per the propagation policy, else gone at once. */
  delete(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    options: ObjectDeleteOptions,
  ): { code: number; body: unknown } {
    if (resource === 'pods') return { code: 200, body: this.pods.delete(namespace!, name, options) };
    const object = this.store.mustGet(resource, namespace, name);
    if (options.preconditions?.uid && options.preconditions.uid !== object.metadata.uid) {
      throw conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${options.preconditions.uid}, UID in object meta: ${object.metadata.uid}`,
      );
    }
    if (
      options.preconditions?.resourceVersion &&
      options.preconditions.resourceVersion !== object.metadata.resourceVersion
    ) {
      throw conflict(
        resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${options.preconditions.resourceVersion}, ResourceVersion in object meta: ${object.metadata.resourceVersion}`,
      );
    }
    const policy = propagationPolicy(options);
    const finalizers = new Set(object.metadata.finalizers ?? []);
    if (policy === 'Orphan') {
      finalizers.add(ORPHAN_FINALIZER);
      finalizers.delete(FOREGROUND_FINALIZER);
    }
    if (policy === 'Foreground') {
      finalizers.add(FOREGROUND_FINALIZER);
      finalizers.delete(ORPHAN_FINALIZER);
    }
    if (policy === 'Background') {
      finalizers.delete(ORPHAN_FINALIZER);
      finalizers.delete(FOREGROUND_FINALIZER);
    }
    if (finalizers.size === 0) {
      const removed = this.remove(resource, object, options.dryRun);
      return {
        code: 200,
        body: {
          ...statusObject(200, '', ''),
          details: { name, group: RESOURCES[resource].group, kind: resource, uid: removed.metadata.uid },
        },
      };
    }
    object.metadata.finalizers = [...finalizers];
    object.metadata.deletionTimestamp ??= apiTime();
    object.metadata.deletionGracePeriodSeconds = 0;
    const updated = this.store.update(resource, object, undefined, options.dryRun);
    return { code: 202, body: updated };
  }

  /** The garbage collector removes a finalizer it has honoured. */
  removeFinalizer(resource: Resource, object: KubeObject, finalizer: string): void {
    const current = this.store.get(resource, object.metadata.namespace, object.metadata.name);
    if (!current || current.metadata.uid !== object.metadata.uid || !current.metadata.finalizers?.includes(finalizer))
      return;
    current.metadata.finalizers = current.metadata.finalizers.filter((f) => f !== finalizer);
    if (!current.metadata.finalizers.length) delete current.metadata.finalizers;
    if (resource === 'pods') {
      this.pods.patch(current.metadata.namespace!, current.metadata.name, 'application/merge-patch+json', {
        metadata: { finalizers: current.metadata.finalizers ?? null },
      });
      return;
    }
    this.commitUpdate(resource, current);
  }
}

/** ValidateConfigMap: keys are config keys, values strings, data and binaryData together within 1 MiB. */
function validateConfigMap(object: KubeObject): void {
  const name = object.metadata.name;
  let size = 0;
  for (const field of ['data', 'binaryData'] as const) {
    const map = object[field];
    if (map === undefined || map === null) continue;
    if (typeof map !== 'object' || Array.isArray(map))
      throw invalid('ConfigMap', name, `${field}: Invalid value: expected a map of strings`);
    for (const [key, value] of Object.entries(map)) {
      if (!/^[-._a-zA-Z0-9]+$/.test(key) || key.length > 253)
        throw invalid(
          'ConfigMap',
          name,
          `${field}[${key}]: Invalid value: ${JSON.stringify(key)}: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
        );
      if (typeof value !== 'string')
        throw invalid('ConfigMap', name, `${field}[${key}]: Invalid value: expected a string, got ${typeof value}`);
      size += key.length + value.length;
    }
  }
  if (size > 1024 * 1024) throw invalid('ConfigMap', name, `[]: Too long: must have at most 1048576 bytes`);
}

export function propagationPolicy(options: ObjectDeleteOptions): PropagationPolicy {
  const policy = options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : 'Background');
  if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
    throw new ApiError(
      422,
      'Invalid',
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  return policy;
}
