// The three patch types the API takes: JSON patch, merge patch and strategic merge patch.
import { badRequest, ApiError } from './status.ts';

type Json = any;

/** RFC 7386: objects merge, null deletes, anything else replaces. */
function mergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// Lists merged by a key in a strategic merge patch (the patchMergeKey tags of k8s.io/api); other lists are replaced.
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
};
/** Primitive lists merged as sets (patchStrategy merge). */
const PRIMITIVE_SETS = new Set(['finalizers']);

function mergeKeyFor(field: string, parent: string | undefined): string | undefined {
  // Container ports merge by containerPort; a Service's ports by port.
  if (field === 'ports') return parent === 'spec' ? 'port' : 'containerPort';
  return MERGE_KEYS[field];
}

function mergeList(field: string, parent: string | undefined, current: Json, patch: Json[]): Json {
  if (PRIMITIVE_SETS.has(field)) return [...new Set([...(Array.isArray(current) ? current : []), ...patch])];
  const key = mergeKeyFor(field, parent);
  if (!key) return patch.filter((item) => !(item && typeof item === 'object' && item.$patch));
  const result: Json[] = Array.isArray(current) ? [...current] : [];
  for (const item of patch) {
    const at = result.findIndex((e) => e?.[key] === item?.[key]);
    if (item?.$patch === 'delete') {
      if (at >= 0) result.splice(at, 1);
      continue;
    }
    if (item?.$patch === 'replace') {
      const { $patch: _r, ...rest } = item;
      if (at >= 0) result[at] = rest;
      else result.push(rest);
      continue;
    }
    if (at >= 0) result[at] = strategicMerge(result[at], item, field);
    else result.push(strategicMerge(undefined, item, field));
  }
  return result;
}

/** Strategic merge patch (apimachinery strategicpatch): maps merge, lists with a merge key merge by it, directives honoured. */
function strategicMerge(target: Json, patch: Json, parent?: string): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  if (patch.$patch === 'replace') {
    const { $patch: _r, ...rest } = patch;
    return rest;
  }
  if (patch.$patch === 'delete') return undefined;
  let result: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  const retain: string[] | undefined = patch.$retainKeys;
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$setElementOrder/') || key === '$retainKeys' || key === '$patch') continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(result[field]))
        result[field] = result[field].filter((v: Json) => !(value as Json[]).includes(v));
      continue;
    }
    if (value === null) delete result[key];
    else if (Array.isArray(value)) result[key] = mergeList(key, parent, result[key], value);
    else {
      const merged = strategicMerge(result[key], value, key);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    }
  }
  if (retain) result = Object.fromEntries(Object.entries(result).filter(([k]) => retain.includes(k)));
  return result;
}

export function strategicMergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch))
    throw badRequest('a strategic merge patch must be a JSON object');
  return strategicMerge(target, patch);
}

function pointer(path: string): string[] {
  if (!path.startsWith('/')) throw badRequest(`json patch path must start with "/": ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902: add, remove, replace and test. */
function jsonPatch(target: Json, operations: Json): Json {
  if (!Array.isArray(operations)) throw badRequest('a json patch must be an array of operations');
  const doc = structuredClone(target);
  for (const op of operations) {
    const parts = pointer(String(op?.path ?? ''));
    const last = parts.pop()!;
    let parent = doc;
    for (const part of parts) {
      if (parent?.[part] === undefined) {
        if (op.op === 'add') parent[part] = {};
        else throw new ApiError(422, 'Invalid', `json patch: path ${op.path} does not exist`);
      }
      parent = parent[part];
    }
    const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : -1;
    switch (op.op) {
      case 'add':
        if (Array.isArray(parent)) parent.splice(index, 0, op.value);
        else parent[last] = op.value;
        break;
      case 'replace':
        if (!(last in parent)) throw new ApiError(422, 'Invalid', `json patch: cannot replace missing ${op.path}`);
        parent[last] = op.value;
        break;
      case 'remove':
        if (!(last in parent)) throw new ApiError(422, 'Invalid', `json patch: cannot remove missing ${op.path}`);
        if (Array.isArray(parent)) parent.splice(index, 1);
        else delete parent[last];
        break;
      case 'test':
        if (JSON.stringify(parent[last]) !== JSON.stringify(op.value))
          throw new ApiError(422, 'Invalid', `json patch: test failed at ${op.path}`);
        break;
      default:
        throw badRequest(`json patch: unsupported op ${JSON.stringify(op?.op)}`);
    }
  }
  return doc;
}

export function applyPatch(contentType: string, target: Json, body: Json): Json {
  if (contentType.startsWith('application/json-patch+json')) return jsonPatch(target, body);
  if (contentType.startsWith('application/merge-patch+json')) return mergePatch(target, body);
  if (contentType.startsWith('application/strategic-merge-patch+json')) return strategicMergePatch(target, body);
  throw new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
  );
}
