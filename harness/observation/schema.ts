// The observation file: the evidence of one scenario run, written once and never edited.
// Every time keeps its source: harness clock, API (whole seconds), or the container's own log.
import { z } from 'zod';
import { HarnessTimeSchema, isoTime, LogLineSchema, RequestRecordSchema } from './parts.ts';
import { RetriesSchema } from './retries.ts';

export { HarnessTimeSchema, LogLineSchema } from './parts.ts';
import { ScenarioSchema } from '../scenario/schema.ts';

export const OBSERVATION_SCHEMA_VERSION = 7;
/** Older versions this termlab still reads (and grades with a note). */
export const READABLE_OLD_VERSIONS = [1, 2, 3, 4, 5, 6] as const;
const OBSERVATION_KIND = 'termlab.observation';
export const MAX_OBSERVATION_BYTES = 16 * 1024 * 1024;
/** A read that takes longer than this is not a file on a disk: give up on it. */
export const READ_TIME_LIMIT_MS = 10_000;

/** The harness's monotonic clock: ms since the run started, plus the wall time it maps to. */
/** A time as the API gives it (whole seconds), kept verbatim. */
const ApiTimeSchema = isoTime;
/** A time from the lab server's own log line. */
export const ContainerLogTimeSchema = z.object({ time: isoTime, mono: z.number().min(0) });

export const ContainerStateSchema = z.object({
  name: z.string(),
  state: z.enum(['waiting', 'running', 'terminated', 'unknown']),
  ready: z.boolean().optional(),
  exitCode: z.int().optional(),
  reason: z.string().optional(),
  /** From initContainerStatuses (a native sidecar's); absent for a main container's. Version 5 on. */
  init: z.boolean().optional(),
});

/**
 * status.reason and status.message, verbatim (null: the pod had none): why the kubelet ended a pod
 * on its own, as `DeadlineExceeded` when activeDeadlineSeconds ran out. Absent in files before version 4.
 */
const PodStatusCause = {
  statusReason: z.string().max(1024).nullable().optional(),
  statusMessage: z.string().max(4096).nullable().optional(),
};

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
  /** status.startTime (whole seconds): what activeDeadlineSeconds is measured from. Absent in files from before it was recorded. */
  startTime: ApiTimeSchema.nullable().optional(),
  ...PodStatusCause,
});

export const WatchLifecycleSchema = z.object({
  event: z.enum(['connected', 'dropped', 'resumed', 'expired-relisted', 'gave-up']),
  at: HarnessTimeSchema,
  resourceVersion: z.string().nullable(),
  detail: z.string().optional(),
});

/**
 * One moment in the life of a connection the harness's request rode on (a port-forward stream
 * through the API server): its open, each error, its close and which side closed it. A path the
 * harness lost is its own trouble, never a verdict about the kubelet (version 3 on).
 */
const TransportEventSchema = z.object({
  /** The forwarded connection's number, from 1, in the order the harness opened them. */
  connection: z.int().min(1).max(1_000_000),
  event: z.enum(['opened', 'error', 'closed']),
  at: HarnessTimeSchema,
  /** For 'closed': the harness (its client finished or gave up) or the remote side (API server, kubelet, pod). */
  by: z.enum(['harness', 'remote']).optional(),
  /** For a remote close: the WebSocket close code; 1006 (or none) is a cut without a close frame. */
  code: z.int().nullable().optional(),
  detail: z.string().max(1024).optional(),
});

/**
 * A pod read with GET, not a watch event: after a watch gap, after a 410 relist, or at the end of a
 * scenario. Kept apart from the watch events so a re-read state is never disguised as one.
 */
const PodReadSchema = z.object({
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
  ...PodStatusCause,
});

/** Where a claim came from: a watch event, a pod read (index in evidence.podReads), a log line (index in evidence.logLines), or a harness point. */
const WatchCitationSchema = z.object({
  kind: z.literal('watch'),
  type: WatchEventSchema.shape.type,
  resourceVersion: z.string(),
});
const ReadCitationSchema = z.object({
  kind: z.literal('read'),
  index: z.int().min(0),
  resourceVersion: z.string().nullable(),
});
const LogCitationSchema = z.object({ kind: z.literal('log'), line: z.int().min(0) });
const HarnessCitationSchema = z.object({ kind: z.literal('harness'), point: z.literal('deleteIssued') });
const StateCitationSchema = z.discriminatedUnion('kind', [WatchCitationSchema, ReadCitationSchema]);
const InferenceCitationSchema = z.discriminatedUnion('kind', [
  WatchCitationSchema,
  LogCitationSchema,
  HarnessCitationSchema,
]);
export type StateCitation = z.infer<typeof StateCitationSchema>;

const HarnessPoint = z.object({ at: HarnessTimeSchema });
const LoggedPoint = z.object({
  source: z.literal('container-log'),
  at: ContainerLogTimeSchema,
  from: LogCitationSchema,
});
const InferredPoint = z.object({
  source: z.literal('inferred'),
  at: HarnessTimeSchema,
  basis: z.string(),
  from: InferenceCitationSchema,
});
const SeenPoint = HarnessPoint.extend({ from: StateCitationSchema });

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
  containerTerminated: SeenPoint.nullable(),
  podDeleted: SeenPoint.nullable(),
});

/**
 * The predictions a run was started with, sealed into the run record and every observation before
 * its first pod was created: what the student predicted before seeing, never a file written after.
 */
export const SealedPredictionsSchema = z.object({
  /** sha256 of `content`, lower-case hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lower-case hex'),
  sealedAt: isoTime,
  /** The predictions file's text, byte for byte as the run read it. */
  content: z.string().max(64 * 1024),
});
export type SealedPredictions = z.infer<typeof SealedPredictionsSchema>;

/** A point in one container's own log: its time there, and its index in that container's lines. */
const ContainerLogPoint = z.object({ at: ContainerLogTimeSchema, line: z.int().min(0) });

/**
 * One container of the pod as its own sources show it (version 5 on): its hook, TERM and exit from its
 * own log (the app's is evidence.logLines, any other's evidence.containerLogs), its end from the pod
 * watch (or a read). Derived by observation/timeline.ts deriveContainers; the grader recomputes it.
 */
const ContainerRecordSchema = z.object({
  name: z.string(),
  /** The lab server (the app), or the proxy a scenario's sidecar block adds. */
  role: z.enum(['app', 'sidecar']),
  /** An init container with restartPolicy Always (a native sidecar). */
  native: z.boolean(),
  hookStart: ContainerLogPoint.nullable(),
  hookEnd: ContainerLogPoint.nullable(),
  termReceived: ContainerLogPoint.extend({ signal: z.string() }).nullable(),
  /** The process's own exit line, with the code it said it exits with. */
  exitLogged: ContainerLogPoint.extend({ code: z.int() }).nullable(),
  terminated: SeenPoint.nullable(),
  finalState: z.object({ exitCode: z.int(), reason: z.string().nullable(), from: StateCitationSchema }).nullable(),
});
export type ContainerRecord = z.infer<typeof ContainerRecordSchema>;

/** The log of a container other than the lab's (a sidecar's), followed like the lab's (version 5 on). */
const ContainerLogSchema = z.object({
  container: z.string(),
  lines: z.array(LogLineSchema).max(100_000),
  /** The stream broke, or ended while the container was never seen to end. */
  endedEarly: z.boolean(),
  /** As evidence.logStreamEnded, for this container's stream. */
  streamEnded: HarnessTimeSchema.nullable().optional(),
});

/** A field the scenario asked for that the cluster left out of the pod, as the run found it on the live pod. */
const DroppedFieldSchema = z.object({
  container: z.string(),
  /** Its path in the container, e.g. `lifecycle.stopSignal`. */
  field: z.string().max(200),
  /** The value the scenario asked for. */
  asked: z.string().max(200),
  /** Why, in the run's words: the gate that is off, and what ran instead. */
  note: z.string().max(1024),
});
export type DroppedField = z.infer<typeof DroppedFieldSchema>;

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
    /** Which try of this scenario in this run (from 1): a try whose request the harness lost runs again on a fresh pod. */
    attempt: z.int().min(1).max(100).optional(),
    /** Absent when the run was started without --predictions. */
    predictions: SealedPredictionsSchema.optional(),
  }),
  scenario: ScenarioSchema,
  pod: z
    .object({
      name: z.string(),
      namespace: z.string(),
      uid: z.string().min(1),
      resourceVersion: z.string(),
      terminationGracePeriodSeconds: z.int().nullable(),
      /** The live pod's spec.activeDeadlineSeconds (null: none). Absent in files before version 4. */
      activeDeadlineSeconds: z.int().min(0).nullable().optional(),
      capturedAt: HarnessTimeSchema,
      /**
       * The live pod's containers, the lab container first; from version 5 its init containers after them
       * (`init: true`, with their restartPolicy: `Always` is a native sidecar).
       */
      containers: z.array(
        z.object({
          name: z.string(),
          image: z.string(),
          lifecycle: z.record(z.string(), z.unknown()).nullable(),
          init: z.boolean().optional(),
          restartPolicy: z.string().nullable().optional(),
        }),
      ),
      /**
       * What the scenario asked of the pod and the cluster dropped (a lifecycle.stopSignal where ContainerStopSignals
       * is off); absent: nothing. The lifecycle above is the evidence; the grader reads it again.
       */
      dropped: z.array(DroppedFieldSchema).max(16).optional(),
    })
    .nullable(),
  timeline: TimelineSchema,
  request: RequestRecordSchema,
  /** Every container of the pod, the app first (version 5 on; empty before: a one-container pod). */
  containers: z.array(ContainerRecordSchema).max(16).optional(),
  finalState: z
    .object({
      exitCode: z.int(),
      reason: z.string().nullable(),
      signal: z.int().nullable(),
      startedAt: ApiTimeSchema.nullable(),
      finishedAt: ApiTimeSchema.nullable(),
      message: z.string().nullable(),
      /** The container the state belongs to. */
      container: z.string(),
      /** A watch event, or a pod read when the watch missed the end. */
      from: StateCitationSchema,
    })
    .nullable(),
  evidence: z.object({
    watchEvents: z.array(WatchEventSchema),
    watchLifecycle: z.array(WatchLifecycleSchema),
    podReads: z.array(PodReadSchema).default([]),
    /** The request's own path (port-forward connections); empty for the direct transport and in files before version 3. */
    transport: z.array(TransportEventSchema).max(10_000).default([]),
    logLines: z.array(LogLineSchema),
    logEndedEarly: z.boolean(),
    /**
     * When the log stream ended by itself (the kubelet's reader found the container gone: its removal, or its next
     * look after the exit); null when it was cut, stopped by the harness or made whole by a read. Absent in older files.
     */
    logStreamEnded: HarnessTimeSchema.nullable().optional(),
    /** The logs of the pod's other containers (its sidecars), each apart (version 5 on). */
    containerLogs: z.array(ContainerLogSchema).max(16).optional(),
    podEvents: z.array(
      z.object({ reason: z.string(), message: z.string(), type: z.string(), time: z.string().nullable() }),
    ),
  }),
  cleanup: z.array(
    z.object({ action: z.string(), at: HarnessTimeSchema, ok: z.boolean(), error: z.string().nullable() }),
  ),
  /** A retry scenario's attempts, standby pod and ledger (version 6 on; absent for any other scenario). */
  retries: RetriesSchema.optional(),
});

export type Observation = z.infer<typeof ObservationSchema>;
export type HarnessTime = z.infer<typeof HarnessTimeSchema>;
export type WatchEvent = z.infer<typeof WatchEventSchema>;
export type PodRead = z.infer<typeof PodReadSchema>;
export type TransportEvent = z.infer<typeof TransportEventSchema>;

/** Files before version 6 have no retries record: one there was written by hand, and would be graded as evidence. */
const NO_RETRIES = {
  retries: z.undefined({ error: 'a file of this version has no retries record (it came with version 6)' }).optional(),
};

/** Version 2 files: the same shape, without the transport's life (read as the current version with none recorded). */
export const ObservationV2Schema = ObservationSchema.extend({ schemaVersion: z.literal(2), ...NO_RETRIES });
/** Version 3 files: the same shape, without the pod's status reason and message or its active deadline (read as version 4 with none recorded). */
export const ObservationV3Schema = ObservationSchema.extend({ schemaVersion: z.literal(3), ...NO_RETRIES });
/** Version 4 files: the same shape, one container recorded (read as version 5 with no container records: a one-container pod). */
export const ObservationV4Schema = ObservationSchema.extend({ schemaVersion: z.literal(4), ...NO_RETRIES });
/** Version 5 files: the same shape, no retries (read as version 6 with none: no scenario of theirs retried). */
export const ObservationV5Schema = ObservationSchema.extend({ schemaVersion: z.literal(5), ...NO_RETRIES });
/** Version 6 files: retries sent straight to the standby, no Service and no routes (read as version 7 with none recorded). */
const unrouted = (what: string) =>
  z.undefined({ error: `a file of version 6 has no ${what} (it came with version 7)` }).optional();
export const ObservationV6Schema = ObservationSchema.extend({
  schemaVersion: z.literal(6),
  retries: RetriesSchema.extend({
    service: unrouted('retry Service'),
    attempts: z.array(RetriesSchema.shape.attempts.element.extend({ route: unrouted('route') })).max(5),
  }).optional(),
});
