// From a decoded protobuf message to the JSON that Go's encoding/json writes for the same Kubernetes
// object, so a protobuf body becomes what the same object sent as JSON would be. The rules are Go's:
// a present pointer is written even when zero (replicas: 0); a plain scalar is left out when zero
// only with omitempty; a struct is always written ({} when empty); a nil slice or map is left out
// with omitempty and null without; omitzero leaves out a zero value of any kind (a zero
// creationTimestamp, from 1.37's tags); an inline struct's fields join its parent's; map keys are sorted.
// A few types write their own JSON (Time, MicroTime, Quantity, IntOrString, FieldsV1).
import protobuf from 'protobufjs';

export interface FieldShape {
  json: string;
  pointer: boolean;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
}
/** Message full name (no leading dot) -> protobuf field name -> its Go field's JSON shape. */
export type Shapes = Map<string, Map<string, FieldShape>>;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** The types whose JSON Go writes with its own MarshalJSON: converted here, not by their fields. */
export const CUSTOM_JSON = new Set([
  `${META}.Time`,
  `${META}.MicroTime`,
  `${META}.FieldsV1`,
  'k8s.io.apimachinery.pkg.api.resource.Quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
]);

/** A body that decodes but cannot be the object it says: names the field. */
export class ShapeError extends Error {}

/** The generator's tag ("*replicas,omitempty", ",inline") back into its parts. */
export function parseShape(tag: string): FieldShape {
  const pointer = tag.startsWith('*');
  const [json = '', ...options] = (pointer ? tag.slice(1) : tag).split(',');
  return {
    json,
    pointer,
    omitempty: options.includes('omitempty'),
    omitzero: options.includes('omitzero'),
    inline: options.includes('inline'),
  };
}

type Plain = Record<string, unknown>;
const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/** metav1.Time: RFC 3339 in UTC to the second; the zero time is null. */
function rfc3339(v: Plain, fractionDigits: 0 | 6): string | null {
  const seconds = num(v.seconds),
    nanos = num(v.nanos);
  if (seconds === 0 && nanos === 0) return null;
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return fractionDigits ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function custom(name: string, v: Plain, path: string): unknown {
  switch (name) {
    case `${META}.Time`:
      return rfc3339(v, 0);
    case `${META}.MicroTime`:
      return rfc3339(v, 6);
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return typeof v.string === 'string' && v.string !== '' ? v.string : '0';
    // type 0 is an int, 1 a string (intstr.Type).
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return num(v.type) === 1 ? (v.strVal ?? '') : num(v.intVal);
    case `${META}.FieldsV1`: {
      if (typeof v.Raw !== 'string' || v.Raw === '') return null;
      try {
        return JSON.parse(Buffer.from(v.Raw, 'base64').toString('utf8'));
      } catch {
        throw new ShapeError(`${path}: FieldsV1 holds no JSON`);
      }
    }
  }
  throw new Error(`protobuf-json: no conversion for ${name}`);
}

const zeroOf = (type: string): unknown => (type === 'string' ? '' : type === 'bool' ? false : 0);
const isZero = (v: unknown) => v === '' || v === false || v === 0 || v === null;

/** Go's zero value of a struct (omitzero): nothing in it set, no pointer non-nil, no element. */
function isZeroStruct(type: protobuf.Type, value: Plain, shapes: Shapes): boolean {
  return type.fieldsArray.every((field) => {
    if (!Object.hasOwn(value, field.name)) return true;
    const v = value[field.name];
    if (field.map || field.repeated) return false;
    if (field.resolvedType instanceof protobuf.Type)
      return (
        !shapes.get(type.fullName.slice(1))?.get(field.name)?.pointer &&
        isZeroStruct(field.resolvedType, v as Plain, shapes)
      );
    return isZero(v) && !shapes.get(type.fullName.slice(1))?.get(field.name)?.pointer;
  });
}

function valueJson(field: protobuf.Field, v: unknown, shapes: Shapes, path: string): unknown {
  return field.resolvedType instanceof protobuf.Type ? goJson(field.resolvedType, v as Plain, shapes, path) : v;
}

/**
 * `value` is `type.toObject(message, { longs: Number, bytes: String })`: only the fields that were
 * on the wire (proto2 presence), 64-bit integers as numbers, bytes as base64 (Go's []byte in JSON).
 */
export function goJson(type: protobuf.Type, value: Plain, shapes: Shapes, path: string): unknown {
  const name = type.fullName.slice(1);
  if (CUSTOM_JSON.has(name)) return custom(name, value, path);
  const shape = shapes.get(name);
  if (!shape) throw new Error(`protobuf-json: no JSON shape for ${name}: run npm run generate:protobuf`);
  const out: Plain = {};
  for (const field of type.fieldsArray) {
    const s = shape.get(field.name);
    if (!s) throw new Error(`protobuf-json: no JSON shape for ${name}.${field.name}`);
    const at = s.inline ? path : `${path}.${s.json}`;
    const present = Object.hasOwn(value, field.name);
    const v = value[field.name];
    let json: unknown;
    if (field.map || field.repeated || field.type === 'bytes') {
      const empty =
        !present ||
        (Array.isArray(v)
          ? v.length === 0
          : v === '' || (typeof v === 'object' && v !== null && Object.keys(v).length === 0));
      if (empty) {
        if (s.omitempty || s.omitzero) continue;
        json = null;
      } else if (field.map) {
        const entries = Object.entries(v as Plain).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        json = Object.fromEntries(
          entries.map(([k, item]) => [k, valueJson(field, item, shapes, `${at}[${JSON.stringify(k)}]`)]),
        );
      } else if (field.repeated) {
        json = (v as unknown[]).map((item, i) => valueJson(field, item, shapes, `${at}[${i}]`));
      } else {
        json = v;
      }
    } else if (field.resolvedType instanceof protobuf.Type) {
      if (!present && s.pointer) {
        if (s.omitempty || s.omitzero) continue;
        json = null;
      } else if (s.omitzero && (!present || isZeroStruct(field.resolvedType, v as Plain, shapes))) {
        continue;
      } else {
        // A struct (not a pointer) is there in Go whether or not it was sent: its zero value.
        json = goJson(field.resolvedType, (present ? v : {}) as Plain, shapes, at);
      }
      if (s.inline) {
        Object.assign(out, json);
        continue;
      }
    } else if (s.pointer) {
      if (!present) {
        if (s.omitempty || s.omitzero) continue;
        json = null;
      } else json = v;
    } else {
      json = present ? v : zeroOf(field.type);
      if ((s.omitempty || s.omitzero) && isZero(json)) continue;
    }
    out[s.json] = json;
  }
  return out;
}
