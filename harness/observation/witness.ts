// The witness's records (server/witness.ts writes them, one ConfigMap per pod) and the file
// `termlab class witness export` writes them to: the one schema both are read with. docs/witness.schema.json
// is its JSON Schema (witnessJsonSchema), never a hand-written twin.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TermlabError } from '../../lib/errors.ts';
import { formatIssue } from '../../lib/files.ts';
import { WITNESS_RECORD_VERSION, type WitnessRecord as ServerRecord } from '../../server/contract.ts';
import { isoTime } from './parts.ts';

export const WITNESS_EXPORT_KIND = 'termlab.witness';
export const WITNESS_EXPORT_VERSION = 1;
const MAX_EXPORT_BYTES = 256 * 1024 * 1024;

const ContainerSchema = z.object({
  name: z.string(),
  init: z.boolean(),
  exitCode: z.int(),
  reason: z.string().nullable(),
  startedAt: isoTime.nullable(),
  finishedAt: isoTime.nullable(),
});

const EventSchema = z.object({
  reason: z.string(),
  type: z.string(),
  message: z.string(),
  count: z.int(),
  firstTimestamp: z.string().nullable(),
  lastTimestamp: z.string().nullable(),
});

export const WitnessRecordSchema = z.object({
  version: z.literal(WITNESS_RECORD_VERSION),
  uid: z.string().min(1),
  namespace: z.string().min(1),
  name: z.string().min(1),
  /** The student whose namespace (CLASS-NAME) the pod was in; null outside any student's namespace. */
  student: z.string().nullable(),
  ownerLabel: z.string().nullable(),
  scenario: z.string().nullable(),
  runId: z.string().nullable(),
  created: isoTime.nullable(),
  deletionTimestamp: isoTime.nullable(),
  /** deletionGracePeriodSeconds as first seen with the deletion. */
  grace: z.int().nullable(),
  terminationGracePeriodSeconds: z.int().nullable(),
  /** The deletion was first seen after the containers had ended (the witness was down then). */
  lateDeletion: z.boolean(),
  containers: z.array(ContainerSchema),
  events: z.array(EventSchema),
  goneAt: isoTime.nullable(),
  goneSeenBy: z.enum(['watch', 'relist']).nullable(),
  podResourceVersion: z.string(),
  firstSeenAt: isoTime,
  /** The ConfigMap's resourceVersion when it was exported (absent in a record read straight from the pod's witness). */
  recordVersion: z.string().optional(),
});
export type WitnessRecord = z.infer<typeof WitnessRecordSchema>;

// The server's record type and this schema describe one thing: a field added to one and not the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameShape: Same<Omit<WitnessRecord, 'recordVersion'>, ServerRecord> = true;
void _sameShape;

export const WitnessExportSchema = z.object({
  kind: z.literal(WITNESS_EXPORT_KIND),
  version: z.literal(WITNESS_EXPORT_VERSION),
  /** The cluster the records were read from: its kubeconfig context and API server. */
  cluster: z.object({ context: z.string(), server: z.string() }),
  /** Where the records were kept (the class's witness namespace). */
  namespace: z.string(),
  exportedAt: isoTime,
  records: z.array(WitnessRecordSchema),
});
export type WitnessExport = z.infer<typeof WitnessExportSchema>;

export function witnessJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(WitnessExportSchema, { target: 'draft-2020-12', io: 'input' }), null, 2)}\n`;
}

/** A witness export read and checked; anything off is WITNESS_INVALID naming the file and the field. */
export function parseWitnessExport(text: string, source: string): WitnessExport {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TermlabError('WITNESS_INVALID', `${source}: not JSON: ${(error as Error).message}`, { source });
  }
  const kind = (json as { kind?: unknown } | null)?.kind;
  if (kind !== WITNESS_EXPORT_KIND)
    throw new TermlabError(
      'WITNESS_INVALID',
      `${source}: kind: expected "${WITNESS_EXPORT_KIND}" (a file from \`termlab class witness export\`), got ${JSON.stringify(kind ?? null)}`,
      { source },
    );
  const parsed = WitnessExportSchema.safeParse(json);
  if (!parsed.success)
    throw new TermlabError('WITNESS_INVALID', `${source}: ${formatIssue(parsed.error.issues[0]!, '(file)')}`, {
      source,
    });
  const seen = new Set<string>();
  parsed.data.records.forEach((r, i) => {
    if (seen.has(r.uid))
      throw new TermlabError('WITNESS_INVALID', `${source}: records[${i}].uid: ${r.uid} is recorded twice`, { source });
    seen.add(r.uid);
  });
  return parsed.data;
}

export async function readWitnessExport(path: string): Promise<WitnessExport> {
  let text: string;
  try {
    const data = await readFile(path);
    if (data.length > MAX_EXPORT_BYTES)
      throw new TermlabError('INPUT_TOO_LARGE', `${path}: larger than ${MAX_EXPORT_BYTES} bytes`, { source: path });
    text = data.toString('utf8');
  } catch (error) {
    if (error instanceof TermlabError) throw error;
    throw new TermlabError(
      'INPUT_UNREADABLE',
      `--witness-file ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      { source: path },
    );
  }
  return parseWitnessExport(text, path);
}
