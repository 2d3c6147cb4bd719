// Request bodies in Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf), as kubectl's
// typed commands send them (`kubectl create deployment|service|namespace`): the 4-byte magic "k8s\0",
// then a runtime.Unknown whose typeMeta names the kind and whose raw holds the typed message. The
// messages come from Kubernetes' generated.proto (protobuf-types.json, written by
// protobuf-generate.ts) and are decoded by protobufjs; protobuf-json.ts then gives the object the
// JSON that the same object sent as JSON would have. The answers stay JSON: kubectl asks for
// "protobuf, json" and reads either.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { z } from 'zod';
import { formatIssue } from '../../lib/files.ts';
import { packagePath } from '../../lib/package-root.ts';
import { goJson, parseShape, ShapeError, type Shapes } from './protobuf-json.ts';
import { ApiError, badRequest } from './status.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const TYPES_FILE = packagePath('cluster/sim/protobuf-types.json');

const TypesFileSchema = z.object({
  source: z.string(),
  license: z.string(),
  /** "apps/v1 Deployment" (or "* DeleteOptions", any group) -> message full name */
  kinds: z.record(z.string(), z.string()),
  json: z.record(
    z.string(),
    z.record(z.string(), z.string().regex(/^\*?[A-Za-z0-9]*(,omitempty)?(,omitzero)?(,inline)?$/)),
  ),
  protobuf: z.object({ nested: z.record(z.string(), z.unknown()) }),
});

interface Types {
  unknown: protobuf.Type;
  kinds: Map<string, protobuf.Type>;
  shapes: Shapes;
}
let loaded: Types | null = null;

/** The message types, read once, on the first protobuf body. */
function types(): Types {
  if (loaded) return loaded;
  const parsed = TypesFileSchema.safeParse(JSON.parse(readFileSync(TYPES_FILE, 'utf8')));
  if (!parsed.success) throw new Error(formatIssue(parsed.error.issues[0]!, TYPES_FILE));
  const root = protobuf.Root.fromJSON(parsed.data.protobuf as protobuf.INamespace);
  root.resolveAll();
  const kinds = new Map(Object.entries(parsed.data.kinds).map(([k, message]) => [k, root.lookupType(message)]));
  const shapes: Shapes = new Map(
    Object.entries(parsed.data.json).map(([message, fields]) => [
      message,
      new Map(Object.entries(fields).map(([f, tag]) => [f, parseShape(tag)])),
    ]),
  );
  loaded = { unknown: root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'), kinds, shapes };
  return loaded;
}

/**
 * A field number the type knows that arrived with another wire type is kept by protobufjs as an
 * unknown field (as the protobuf rules say); Go's decoder refuses it, and so does this, naming it.
 */
function wrongWireType(type: protobuf.Type, message: protobuf.Message, path: string): string | null {
  for (const raw of (message as unknown as { $unknowns?: Uint8Array[] }).$unknowns ?? []) {
    const tag = protobuf.Reader.create(raw).uint32();
    const field = type.fieldsById[tag >>> 3];
    if (field) return `${path}.${field.name}: wrong wire type ${tag & 7}`;
  }
  for (const field of type.fieldsArray) {
    if (!(field.resolvedType instanceof protobuf.Type) || !Object.hasOwn(message, field.name)) continue;
    const v = (message as unknown as Record<string, unknown>)[field.name];
    const items: [string, protobuf.Message][] = field.map
      ? Object.entries(v as Record<string, protobuf.Message>).map(([k, m]) => [`[${JSON.stringify(k)}]`, m])
      : field.repeated
        ? (v as protobuf.Message[]).map((m, i) => [`[${i}]`, m])
        : [['', v as protobuf.Message]];
    for (const [suffix, m] of items) {
      const problem = wrongWireType(field.resolvedType, m, `${path}.${field.name}${suffix}`);
      if (problem) return problem;
    }
  }
  return null;
}

/** The object a protobuf request body holds, as the JSON the same object would be; 400 when it is not one. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest(
      `the object provided is unrecognized: provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (${body.subarray(0, 30).toString('hex')}${body.length > 30 ? ' ...' : ''})`,
    );
  }
  const t = types();
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
  try {
    envelope = t.unknown.decode(body.subarray(MAGIC.length)) as typeof envelope;
  } catch (error) {
    throw badRequest(
      `the object provided is unrecognized: the runtime.Unknown envelope does not decode: proto: ${(error as Error).message}`,
    );
  }
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const kind = envelope.typeMeta?.kind ?? '';
  if (!kind || !apiVersion)
    throw badRequest(
      'the object provided is unrecognized: the runtime.Unknown envelope names no apiVersion and kind (typeMeta)',
    );
  const type = t.kinds.get(`${apiVersion} ${kind}`) ?? t.kinds.get(`* ${kind}`);
  if (!type) {
    throw badRequest(
      `no kind "${kind}" is registered for version "${apiVersion}" in the simulated cluster's protobuf types (it decodes ${[...t.kinds.keys()].map((k) => k.replace(/^\* (.*)$/, '$1 of any version')).join(', ')})`,
    );
  }
  const cannot = (detail: string) =>
    badRequest(`${kind} in version "${apiVersion}" cannot be handled as a ${kind}: ${detail}`);
  let message: protobuf.Message;
  try {
    const reader = protobuf.Reader.create(envelope.raw ?? new Uint8Array());
    reader.discardUnknown = false; // kept, so a known field with the wrong wire type can be named
    message = type.decode(reader);
  } catch (error) {
    throw cannot(`proto: ${(error as Error).message}`);
  }
  const wrong = wrongWireType(type, message, kind);
  if (wrong) throw cannot(`proto: ${wrong}`);
  let object: unknown;
  try {
    object = goJson(type, type.toObject(message, { longs: Number, bytes: String }), t.shapes, kind);
  } catch (error) {
    if (error instanceof ShapeError) throw cannot(error.message);
    throw error;
  }
  // TypeMeta is not in the typed message: it is the envelope's, written first as Go does.
  return { kind, apiVersion, ...(object as Record<string, unknown>) };
}

/** The readBody hook: protobuf bodies decoded, other non-JSON media refused as the API server does. */
export function refuseOrDecode(contentType: string, body: Buffer): Record<string, unknown> | undefined {
  if (contentType.startsWith(PROTOBUF_MEDIA_TYPE)) return body.length ? decodeProtobufBody(body) : undefined;
  throw new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, ${PROTOBUF_MEDIA_TYPE}`,
  );
}
