// The three patch types the API takes, enough for labels, annotations and finalizers.
import { badRequest, ApiError } from './status.ts';

type Json = any;

/** RFC 7386: objects merge, null deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** Strategic merge as it applies to metadata: `finalizers` is a set (patchStrategy merge). */
export function strategicMergePatch(target: Json, patch: Json): Json {
  const { $deleteFromPrimitiveList: _ignored, ...rest } = patch ?? {};
  const metadataPatch = patch?.metadata ?? {};
  const removeFinalizers: string[] = metadataPatch['$deleteFromPrimitiveList/finalizers'] ?? [];
  const addFinalizers: string[] | undefined = metadataPatch.finalizers;
  const cleanMetadata = Object.fromEntries(Object.entries(metadataPatch).filter(([k]) => !k.startsWith('$') && k !== 'finalizers'));
  const merged = mergePatch(target, { ...rest, ...(patch?.metadata ? { metadata: cleanMetadata } : {}) });
  if (addFinalizers !== undefined || removeFinalizers.length) {
    const current: string[] = merged.metadata?.finalizers ?? [];
    const union = addFinalizers === null ? [] : [...new Set([...current, ...(addFinalizers ?? [])])];
    merged.metadata.finalizers = union.filter((f) => !removeFinalizers.includes(f));
  }
  return merged;
}

function pointer(path: string): string[] {
  if (!path.startsWith('/')) throw badRequest(`json patch path must start with "/": ${path}`);
  return path.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902: add, remove, replace and test. */
export function jsonPatch(target: Json, operations: Json): Json {
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
        if (Array.isArray(parent)) parent.splice(index, 0, op.value); else parent[last] = op.value;
        break;
      case 'replace':
        if (!(last in parent)) throw new ApiError(422, 'Invalid', `json patch: cannot replace missing ${op.path}`);
        parent[last] = op.value;
        break;
      case 'remove':
        if (!(last in parent)) throw new ApiError(422, 'Invalid', `json patch: cannot remove missing ${op.path}`);
        if (Array.isArray(parent)) parent.splice(index, 1); else delete parent[last];
        break;
      case 'test':
        if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new ApiError(422, 'Invalid', `json patch: test failed at ${op.path}`);
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
  throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
}
