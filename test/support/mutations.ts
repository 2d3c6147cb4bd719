// Every single-field change of an observation, for the property test: each leaf of the JSON
// (and each field of the JSON log lines inside it) changed in a way its schema still accepts.
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** Far enough to cross any tolerance the grader has, small enough to stay a plausible time. */
const SHIFT_MS = 7_000;

export interface Mutation {
  path: string;
  data: unknown;
}

function changed(value: unknown): unknown[] {
  if (typeof value === 'number') return [value + SHIFT_MS, Math.max(0, value - SHIFT_MS)].filter((v) => v !== value);
  if (typeof value === 'boolean') return [!value];
  if (typeof value === 'string') {
    if (ISO.test(value))
      return [
        new Date(Date.parse(value) + SHIFT_MS).toISOString(),
        new Date(Date.parse(value) - SHIFT_MS).toISOString(),
      ];
    if (/^[0-9a-f]{64}$/.test(value)) return [value.replace(/^./, (c) => (c === '0' ? '1' : '0'))];
    return [`${value}x`];
  }
  return [];
}

export function* leaves(value: unknown, path: string[]): Generator<{ path: string[]; value: unknown }> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) yield* leaves(child, [...path, key]);
  } else {
    yield { path, value };
  }
}

export function setAt(root: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string, any>;
  let node: Record<string, any> = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path.at(-1)!] = value;
  return copy;
}

export function* mutations(data: unknown): Generator<Mutation> {
  for (const { path, value } of leaves(data, [])) {
    const isLogText = path.length === 4 && path[0] === 'evidence' && path[1] === 'logLines' && path[3] === 'text';
    if (isLogText && typeof value === 'string' && value.startsWith('{')) {
      const inner = JSON.parse(value) as unknown;
      for (const leaf of leaves(inner, [])) {
        for (const next of changed(leaf.value)) {
          yield {
            path: `${path.join('.')}.${leaf.path.join('.')}`,
            data: setAt(data, path, JSON.stringify(setAt(inner, leaf.path, next))),
          };
        }
      }
      continue;
    }
    for (const next of changed(value)) yield { path: path.join('.'), data: setAt(data, path, next) };
  }
}

function* nodes(value: unknown, path: string[]): Generator<{ path: string[]; value: unknown }> {
  yield { path, value };
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) yield* nodes(child, [...path, key]);
  }
}

/** Every field set to null, and every array element removed: what a damaged or trimmed file looks like. */
export function* removals(data: unknown): Generator<Mutation> {
  for (const { path, value } of nodes(data, [])) {
    if (!path.length) continue;
    yield { path: `${path.join('.')}=null`, data: setAt(data, path, null) };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++)
        yield {
          path: `${path.join('.')}.${i} removed`,
          data: setAt(
            data,
            path,
            value.filter((_, j) => j !== i),
          ),
        };
    }
  }
}

/** Every number and time pushed to the edge of what its schema accepts. */
export function* extremes(data: unknown): Generator<Mutation> {
  for (const { path, value } of leaves(data, [])) {
    const values =
      typeof value === 'number'
        ? [Number.MAX_SAFE_INTEGER, 1e300, 0]
        : typeof value === 'string' && ISO.test(value)
          ? ['9999-12-31T23:59:59.999Z', '0001-01-01T00:00:00Z']
          : [];
    for (const next of values) yield { path: `${path.join('.')}=${next}`, data: setAt(data, path, next) };
  }
}
