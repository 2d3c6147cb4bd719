// The rollout observation: the evidence of one rollout under load, written once and never edited.
// Every time keeps its source: the harness clock (watch events, reads), the API (whole seconds),
// a lab pod's own log, or the load pod's own log. The load's per-request records stay in the load
// pod's log lines, verbatim; the grader parses them (rollout/load-records.ts), so no second copy
// can disagree with them.
import { z } from 'zod';
import {
  ContainerStateSchema,
  HarnessTimeSchema,
  LogLineSchema,
  ObservationSchema,
  WatchLifecycleSchema,
} from './schema.ts';
import { RolloutScenarioSchema } from '../scenario/rollout.ts';

export const ROLLOUT_SCHEMA_VERSION = 1;
export const ROLLOUT_KIND = 'termlab.rollout-observation';

const isoTime = z.iso.datetime({ offset: true });
const Lifecycle = z.record(z.string(), z.unknown()).nullable();

/** One container as the API held it: its lifecycle verbatim (wire form) and the lab's mode. */
export const LiveContainerSchema = z.object({
  name: z.string(),
  image: z.string(),
  lifecycle: Lifecycle,
  labMode: z.string().nullable(),
});

const Base = {
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED']),
  resourceVersion: z.string(),
  receivedAt: HarnessTimeSchema,
};

export const RolloutPodEventSchema = z.object({
  ...Base,
  name: z.string(),
  uid: z.string().min(1),
  role: z.enum(['lab', 'load', 'other']),
  templateHash: z.string().nullable(),
  phase: z.string().nullable(),
  ready: z.boolean(),
  creationTimestamp: isoTime.nullable(),
  deletionTimestamp: isoTime.nullable(),
  deletionGracePeriodSeconds: z.int().nullable(),
  containers: z.array(ContainerStateSchema),
  /** The spec as the event carried it: the lifecycle each container was created with. */
  spec: z.array(LiveContainerSchema),
});

export const ReplicaSetEventSchema = z.object({
  ...Base,
  name: z.string(),
  uid: z.string().min(1),
  templateHash: z.string().nullable(),
  revision: z.string().nullable(),
  replicas: z.int(),
  readyReplicas: z.int(),
  availableReplicas: z.int(),
  deletionTimestamp: isoTime.nullable(),
});

export const DeploymentEventSchema = z.object({
  ...Base,
  generation: z.int().nullable(),
  observedGeneration: z.int().nullable(),
  replicas: z.int(),
  updatedReplicas: z.int(),
  readyReplicas: z.int(),
  availableReplicas: z.int(),
  unavailableReplicas: z.int(),
});

export const SliceEventSchema = z.object({
  ...Base,
  name: z.string(),
  endpoints: z.array(
    z.object({
      podUid: z.string().nullable(),
      podName: z.string().nullable(),
      addresses: z.array(z.string()),
      ready: z.boolean().nullable(),
      serving: z.boolean().nullable(),
      terminating: z.boolean().nullable(),
    }),
  ),
});

const ResourceSchema = z.enum(['deployments', 'replicasets', 'pods', 'endpointslices']);

/** A terminating pod read with GET the moment its deletionTimestamp was seen: what it really ran. */
export const LiveReadSchema = z.object({
  pod: z.string(),
  at: HarnessTimeSchema,
  /** The watch event that showed the deletionTimestamp and set this read off. */
  after: z.object({ resourceVersion: z.string() }),
  found: z.boolean(),
  uid: z.string().nullable(),
  resourceVersion: z.string().nullable(),
  deletionTimestamp: isoTime.nullable(),
  terminationGracePeriodSeconds: z.int().nullable(),
  templateHash: z.string().nullable(),
  containers: z.array(LiveContainerSchema),
  /**
   * Where the lifecycle came from: the GET (absent: the GET), or, when the GET came back after the pod was
   * gone (a pod with no hook can end within a busy API's round trip), the watch event that showed its
   * deletion: the object the API held at that resourceVersion.
   */
  source: z.enum(['read', 'watch']).optional(),
});

/** The Deployment's pod template as the API answered (create, then the patch): what new pods get. */
const TemplateRecordSchema = z.object({
  at: HarnessTimeSchema,
  generation: z.int().nullable(),
  containers: z.array(LiveContainerSchema),
});

export const PodLogSchema = z.object({
  pod: z.string(),
  uid: z.string(),
  lines: z.array(LogLineSchema),
  /** The stream ended because the container did (true) or not at all / was cut (false). */
  ended: z.boolean(),
  error: z.string().nullable(),
});

/**
 * What a rollout's watches and log follows record, a rollout's and a verification's alike (their watches
 * share the event helpers, harness/run/rollout-watch.ts): the objects' events, then, after the watches' own
 * life, the pods' logs. Spread in that order into each file's evidence.
 */
export const WATCHED_EVENTS = {
  deploymentEvents: z.array(DeploymentEventSchema),
  replicaSetEvents: z.array(ReplicaSetEventSchema),
  podEvents: z.array(RolloutPodEventSchema),
  sliceEvents: z.array(SliceEventSchema),
};
export const FOLLOWED_LOGS = { podLogs: z.array(PodLogSchema), loadLog: PodLogSchema.nullable() };

export const RolloutObservationSchema = z.object({
  schemaVersion: z.literal(ROLLOUT_SCHEMA_VERSION),
  kind: z.literal(ROLLOUT_KIND),
  run: ObservationSchema.shape.run,
  scenario: RolloutScenarioSchema,
  objects: z.object({
    deployment: z.object({ name: z.string(), uid: z.string() }).nullable(),
    service: z
      .object({
        name: z.string(),
        uid: z.string(),
        clusterIP: z.string().nullable(),
        port: z.int(),
        nodePort: z.int().nullable(),
      })
      .nullable(),
    loadPod: z.object({ name: z.string(), uid: z.string() }).nullable(),
    /** The base URL the load pod was given. */
    target: z.string().nullable(),
  }),
  template: z.object({ before: TemplateRecordSchema.nullable(), after: TemplateRecordSchema.nullable() }),
  timeline: z.object({
    watchesEstablished: HarnessTimeSchema.nullable(),
    deploymentAvailable: HarnessTimeSchema.nullable(),
    loadPodCreated: HarnessTimeSchema.nullable(),
    templateChanged: HarnessTimeSchema.nullable(),
    rolloutComplete: HarnessTimeSchema.nullable(),
    loadEnded: HarnessTimeSchema.nullable(),
  }),
  liveReads: z.array(LiveReadSchema),
  evidence: z.object({
    ...WATCHED_EVENTS,
    watchLifecycle: z.array(WatchLifecycleSchema.extend({ resource: ResourceSchema })),
    ...FOLLOWED_LOGS,
  }),
  cleanup: ObservationSchema.shape.cleanup,
});

export type RolloutObservation = z.infer<typeof RolloutObservationSchema>;
export type RolloutPodEvent = z.infer<typeof RolloutPodEventSchema>;
export type LiveRead = z.infer<typeof LiveReadSchema>;
export type LiveContainer = z.infer<typeof LiveContainerSchema>;
export type PodLog = z.infer<typeof PodLogSchema>;

export function isRolloutObservation(data: unknown): boolean {
  return (data as { kind?: unknown } | null)?.kind === ROLLOUT_KIND;
}
