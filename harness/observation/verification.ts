// The verification observation: the evidence of one `termlab verify` run against a team's own
// Deployment, written once and never edited. Times keep their sources as in a rollout observation:
// the harness clock (watch events, reads), the API (whole seconds), the kubelet's Events, the pods'
// and the load pod's own logs. The per-request records stay in the load pod's log lines, verbatim.
import { z } from 'zod';
import { FOLLOWED_LOGS, LiveContainerSchema, LiveReadSchema, PodLogSchema, WATCHED_EVENTS } from './rollout.ts';
import { HarnessTimeSchema, ObservationSchema, WatchLifecycleSchema } from './schema.ts';

export const VERIFICATION_SCHEMA_VERSION = 1;
export const VERIFICATION_KIND = 'termlab.verification';
/** The file name's ending: `termlab grade` takes these files by it. */
export const VERIFICATION_SUFFIX = '.verification.json';

/**
 * A request's line in the file, as written (files.ts): its record (~560 bytes), its quotes escaped and its
 * receipt times around it; a completed one measures ~770 bytes, a failed one's error code and body head add more.
 */
export const LOAD_LINE_BYTES = 800;
/**
 * The read limit of a verification file. One file per run (an observation's 16 MiB is for 100k of them in a
 * class), so it is sized by what a run's load can log: rate × duration × LOAD_LINE_BYTES. 480 MiB holds ~600k
 * lines: 1,000 requests/s for 10 minutes, the default 50/s for 3.5 hours. Node cannot parse a JSON text past
 * 512 MiB (its longest string), so the limit stays under that.
 */
export const MAX_VERIFICATION_BYTES = 480 * 1024 * 1024;

const isoTime = z.iso.datetime({ offset: true });

export const ActionSchema = z.enum(['rollout-restart', 'delete-pod']);

/** What the user asked for, after defaults: the run's inputs. */
export const VerifyRequestSchema = z.object({
  deployment: z.string().min(1),
  namespace: z.string().min(1),
  service: z.string().nullable(),
  port: z.int().min(1).max(65535).nullable(),
  path: z.string().startsWith('/'),
  rate: z.int().min(1),
  connections: z.int().min(1),
  podHeader: z.string().nullable(),
  action: ActionSchema,
  maxFailed: z.int().min(0),
  loadImage: z.string(),
  /** The request's method (`--method`); absent in files from before the edge: GET. */
  method: z.enum(['GET', 'POST']).optional(),
});

/**
 * The edge the load went through (`--via` or `--url`): where it was sent, its Host header, how the address
 * was found, the route's backend Service and the namespace of the edge's pods (their access log). Absent
 * or null: the load went to the Service straight, as before the edge.
 */
export const EdgePlanSchema = z.object({
  via: z.string().nullable(),
  url: z.string().nullable(),
  target: z.string(),
  host: z.string().nullable(),
  source: z.string(),
  gateway: z.string().nullable(),
  backend: z.object({ service: z.string(), port: z.int().nullable() }).nullable(),
  namespace: z.string().nullable(),
});

/** A pod of the Deployment as read before acting: what it really runs (old pods keep their spec). */
export const TargetPodSchema = z.object({
  name: z.string(),
  uid: z.string(),
  phase: z.string().nullable(),
  ready: z.boolean(),
  templateHash: z.string().nullable(),
  deletionTimestamp: isoTime.nullable(),
  terminationGracePeriodSeconds: z.int().nullable(),
  containers: z.array(LiveContainerSchema),
});

export const TargetSchema = z.object({
  deployment: z.object({
    name: z.string(),
    uid: z.string(),
    generation: z.int().nullable(),
    replicas: z.int(),
    selector: z.record(z.string(), z.string()),
    strategy: z.record(z.string(), z.unknown()).nullable(),
    progressDeadlineSeconds: z.int().nullable(),
    terminationGracePeriodSeconds: z.int().nullable(),
    containers: z.array(LiveContainerSchema),
    /** Each container's probes verbatim (wire form): readiness decides when a pod gets traffic. */
    probes: z.array(
      z.object({
        container: z.string(),
        readiness: z.unknown().nullable(),
        liveness: z.unknown().nullable(),
        startup: z.unknown().nullable(),
      }),
    ),
  }),
  pods: z.array(TargetPodSchema),
  service: z.object({
    name: z.string(),
    uid: z.string(),
    /** Made by termlab for this run (no Service selected the pods, or the simulated cluster needed a NodePort). */
    temporary: z.boolean(),
    type: z.string(),
    clusterIP: z.string().nullable(),
    port: z.int(),
    nodePort: z.int().nullable(),
  }),
});

/** A Kubernetes Event about one of the pods (the kubelet's Killing, the controllers' SuccessfulDelete…). */
export const KubeEventSchema = z.object({
  receivedAt: HarnessTimeSchema,
  type: z.string().nullable(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
  involvedName: z.string().nullable(),
  involvedUid: z.string().nullable(),
  /** The API's own times, verbatim (whole seconds or micro). */
  firstTimestamp: isoTime.nullable(),
  eventTime: z.string().nullable(),
});

export const VerifyResourceSchema = z.enum(['deployments', 'replicasets', 'pods', 'endpointslices', 'events', 'load']);

export const VerificationObservationSchema = z.object({
  schemaVersion: z.literal(VERIFICATION_SCHEMA_VERSION),
  kind: z.literal(VERIFICATION_KIND),
  run: ObservationSchema.shape.run,
  request: VerifyRequestSchema,
  target: TargetSchema.nullable(),
  objects: z.object({
    loadPod: z.object({ name: z.string(), uid: z.string() }).nullable(),
    /** The base URL the load pod was given (the Service's ClusterIP and port; a NodePort on the simulated cluster). */
    loadTarget: z.string().nullable(),
  }),
  edge: EdgePlanSchema.nullable().optional(),
  /** The one change made: the restartedAt annotation's value, or the pod deleted with its UID. */
  acted: z
    .object({
      action: ActionSchema,
      at: HarnessTimeSchema,
      restartedAt: z.string().nullable(),
      generation: z.int().nullable(),
      pod: z.object({ name: z.string(), uid: z.string(), deletionTimestamp: isoTime.nullable() }).nullable(),
    })
    .nullable(),
  timeline: z.object({
    watchesEstablished: HarnessTimeSchema.nullable(),
    loadPodCreated: HarnessTimeSchema.nullable(),
    loadSteady: HarnessTimeSchema.nullable(),
    acted: HarnessTimeSchema.nullable(),
    rolloutComplete: HarnessTimeSchema.nullable(),
    loadEnded: HarnessTimeSchema.nullable(),
  }),
  /** The Deployment's Progressing condition when the rollout did not complete in time, quoted. */
  progressCondition: z.string().nullable(),
  liveReads: z.array(LiveReadSchema),
  evidence: z.object({
    ...WATCHED_EVENTS,
    kubeEvents: z.array(KubeEventSchema),
    watchLifecycle: z.array(WatchLifecycleSchema.extend({ resource: VerifyResourceSchema })),
    ...FOLLOWED_LOGS,
    /** The edge's pods' logs (Traefik's access log among its own lines), for the run's window; absent before the edge. */
    edgeLogs: z.array(PodLogSchema).optional(),
  }),
  cleanup: ObservationSchema.shape.cleanup,
});

export type VerificationObservation = z.infer<typeof VerificationObservationSchema>;
export type VerifyRequest = z.infer<typeof VerifyRequestSchema>;
export type Target = z.infer<typeof TargetSchema>;
export type EdgePlan = z.infer<typeof EdgePlanSchema>;
export type KubeEvent = z.infer<typeof KubeEventSchema>;

export function isVerification(data: unknown): boolean {
  return (data as { kind?: unknown } | null)?.kind === VERIFICATION_KIND;
}

/** The file's JSON Schema (docs/verification.schema.json), derived from the zod schema: never a hand-written twin. */
export function verificationJsonSchema(): string {
  return (
    JSON.stringify(z.toJSONSchema(VerificationObservationSchema, { target: 'draft-2020-12', io: 'input' }), null, 2) +
    '\n'
  );
}
