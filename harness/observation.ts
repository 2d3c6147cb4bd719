// The observation file: the evidence of one scenario run, written once and never edited.
// Every time keeps its source: harness clock, API (whole seconds), or the container's own log.
import { open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { TermlabError } from './errors.ts';
import { writeFileAtomic } from './files.ts';
import { ScenarioSchema } from './scenario/schema.ts';

// Moved to files.ts; still exported here for callers that import it from the observation module.
export { writeFileAtomic };

export const OBSERVATION_SCHEMA_VERSION = 1;
export const OBSERVATION_KIND = 'termlab.observation';
export const MAX_OBSERVATION_BYTES = 16 * 1024 * 1024;

const isoTime = z.iso.datetime({ offset: true });
/** The harness's monotonic clock: ms since the run started, plus the wall time it maps to. */
export const HarnessTimeSchema = z.object({ mono: z.number().min(0), wall: isoTime });
/** A time as the API gives it (whole seconds), kept verbatim. */
const ApiTimeSchema = isoTime;
/** A time from the lab server's own log line. */
export const ContainerLogTimeSchema = z.object({ time: isoTime, mono: z.number().min(0) });

const ContainerStateSchema = z.object({
  name: z.string(),
  state: z.enum(['waiting', 'running', 'terminated', 'unknown']),
  ready: z.boolean().optional(),
  exitCode: z.int().optional(),
  reason: z.string().optional(),
});

export const WatchEventSchema = z.object({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  resourceVersion: z.string(),
  receivedAt: HarnessTimeSchema,
  uid: z.string().nullable(),
  phase: z.string().nullable(),
  conditions: z.array(z.object({ type: z.string(), status: z.string() })),
  deletionTimestamp: ApiTimeSchema.nullable(),
  deletionGracePeriodSeconds: z.int().nullable(),
  containers: z.array(ContainerStateSchema),
});

export const WatchLifecycleSchema = z.object({
  event: z.enum(['connected', 'dropped', 'resumed', 'expired-relisted', 'gave-up']),
  at: HarnessTimeSchema,
  resourceVersion: z.string().nullable(),
  detail: z.string().optional(),
});

/**
 * A pod read with GET, not a watch event: after a watch gap, after a 410 relist, or at the end of a
 * scenario. Kept apart from the watch events so a re-read state is never disguised as one.
 */
export const PodReadSchema = z.object({
  reason: z.enum(['watch-resumed', 'watch-relisted', 'final']),
  at: HarnessTimeSchema,
  /** False when the API answered NotFound: the pod is really gone. */
  found: z.boolean(),
  resourceVersion: z.string().nullable(),
  uid: z.string().nullable(),
  phase: z.string().nullable(),
  deletionTimestamp: ApiTimeSchema.nullable(),
  deletionGracePeriodSeconds: z.int().nullable(),
  finalizers: z.array(z.string()),
  containers: z.array(ContainerStateSchema),
});

export const LogLineSchema = z.object({
  receivedAt: HarnessTimeSchema,
  /** The `timestamps=true` prefix the API adds, verbatim. */
  apiTime: z.string().nullable(),
  text: z.string().max(64 * 1024),
});

const HarnessPoint = z.object({ at: HarnessTimeSchema });
const LoggedPoint = z.object({ source: z.literal('container-log'), at: ContainerLogTimeSchema });
const InferredPoint = z.object({ source: z.literal('inferred'), at: HarnessTimeSchema, basis: z.string() });

export const TimelineSchema = z.object({
  watchEstablished: HarnessPoint.nullable(),
  podReady: HarnessPoint.nullable(),
  requestSent: HarnessPoint.nullable(),
  requestAccepted: HarnessPoint.nullable(),
  deleteIssued: HarnessPoint.nullable(),
  deleteAcknowledged: HarnessPoint.extend({
    deletionTimestamp: ApiTimeSchema,
    deletionGracePeriodSeconds: z.int().min(0),
  }).nullable(),
  hookStart: z.discriminatedUnion('source', [LoggedPoint, InferredPoint]).nullable(),
  hookEnd: z.discriminatedUnion('source', [LoggedPoint, InferredPoint]).nullable(),
  termReceived: LoggedPoint.extend({ signal: z.string() }).nullable(),
  requestEnded: HarnessPoint.nullable(),
  containerTerminated: HarnessPoint.extend({ resourceVersion: z.string() }).nullable(),
  podDeleted: HarnessPoint.extend({ resourceVersion: z.string() }).nullable(),
});

export const RequestOutcomeSchema = z.enum(['completed', 'cut', 'rejected', 'transport-failed', 'not-sent']);

export const ObservationSchema = z.object({
  schemaVersion: z.literal(OBSERVATION_SCHEMA_VERSION),
  kind: z.literal(OBSERVATION_KIND),
  run: z.object({
    runId: z.string().min(1),
    ownerId: z.string().min(1),
    harnessVersion: z.string(),
    observedAt: isoTime,
    complete: z.boolean(),
    incompleteReason: z.string().optional(),
    cluster: z.object({
      context: z.string(),
      server: z.string(),
      serverVersion: z.string().nullable(),
      nodeName: z.string().nullable(),
      containerRuntime: z.string().nullable(),
      simulated: z.boolean(),
    }),
    transport: z.enum(['portforward', 'direct']),
  }),
  scenario: ScenarioSchema,
  pod: z.object({
    name: z.string(),
    namespace: z.string(),
    uid: z.string().min(1),
    resourceVersion: z.string(),
    terminationGracePeriodSeconds: z.int().nullable(),
    capturedAt: HarnessTimeSchema,
    containers: z.array(z.object({ name: z.string(), image: z.string(), lifecycle: z.record(z.string(), z.unknown()).nullable() })),
  }).nullable(),
  timeline: TimelineSchema,
  request: z.object({
    id: z.string(),
    status: z.int().nullable(),
    bytes: z.int().min(0),
    doneSeen: z.boolean(),
    errorCode: z.string().nullable(),
    outcome: RequestOutcomeSchema,
  }),
  finalState: z.object({
    exitCode: z.int(),
    reason: z.string().nullable(),
    signal: z.int().nullable(),
    startedAt: ApiTimeSchema.nullable(),
    finishedAt: ApiTimeSchema.nullable(),
    message: z.string().nullable(),
    fromEvent: z.object({ type: z.string(), resourceVersion: z.string() }),
  }).nullable(),
  evidence: z.object({
    watchEvents: z.array(WatchEventSchema),
    watchLifecycle: z.array(WatchLifecycleSchema),
    podReads: z.array(PodReadSchema).default([]),
    logLines: z.array(LogLineSchema),
    logEndedEarly: z.boolean(),
    podEvents: z.array(z.object({ reason: z.string(), message: z.string(), type: z.string(), time: z.string().nullable() })),
  }),
  cleanup: z.array(z.object({ action: z.string(), at: HarnessTimeSchema, ok: z.boolean(), error: z.string().nullable() })),
});

export type Observation = z.infer<typeof ObservationSchema>;
export type HarnessTime = z.infer<typeof HarnessTimeSchema>;
export type WatchEvent = z.infer<typeof WatchEventSchema>;
export type PodRead = z.infer<typeof PodReadSchema>;

/** Where a schema problem is, as a path a person can find in the file: `timeline.requestSent.at.mono`. */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
  return `${path}: ${issue.message}`;
}

export function parseObservation(data: unknown, source: string): Observation {
  const version = (data as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (data && typeof data === 'object' && version !== undefined && version !== OBSERVATION_SCHEMA_VERSION) {
    throw new TermlabError('OBSERVATION_INVALID', `${source}: schemaVersion: this termlab reads version ${OBSERVATION_SCHEMA_VERSION}, the file says ${JSON.stringify(version)}`, { source, path: 'schemaVersion' });
  }
  const result = ObservationSchema.safeParse(data);
  if (!result.success) {
    const first = result.error.issues[0]!;
    const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
    throw new TermlabError('OBSERVATION_INVALID', `${source}: ${formatIssue(first)}${more}`, { source, path: first.path.join('.'), issues: result.error.issues.length });
  }
  return result.data;
}

export async function readObservation(path: string): Promise<Observation> {
  let text: string;
  try {
    const info = await stat(path);
    if (info.size > MAX_OBSERVATION_BYTES) {
      throw new TermlabError('INPUT_TOO_LARGE', `${path}: ${info.size} bytes is larger than the ${MAX_OBSERVATION_BYTES}-byte limit for an observation`, { source: path });
    }
    const handle = await open(path, 'r');
    try { text = await handle.readFile('utf8'); } finally { await handle.close(); }
  } catch (error) {
    if (error instanceof TermlabError) throw error;
    throw new TermlabError('INPUT_UNREADABLE', `${path}: cannot read: ${(error as Error).message}`, { source: path }, { cause: error });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new TermlabError('OBSERVATION_INVALID', `${path}: not JSON: ${(error as Error).message}`, { source: path, path: '' });
  }
  return parseObservation(data, path);
}

export async function writeObservation(path: string, observation: Observation): Promise<void> {
  // Validate on the way out too: a file we write must be a file we can read back.
  const valid = ObservationSchema.parse(observation);
  await writeFileAtomic(path, JSON.stringify(valid, null, 2) + '\n');
}
