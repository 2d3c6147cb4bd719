import { z } from 'zod';
import { LAB_EFFECT_POINTS, LAB_MODES, PROXY_ON_TERM_MODES } from '../../server/contract.ts';
import { type PreStop, PreStopSchema } from '../../server/contract-schemas.ts';
import { DrainSignalSchema, StopSignalSchema, stopSignalProblem } from './stop-signal.ts';

// The hook is part of the pod's contract (rendered and parsed back there): one schema for both.
export { PreStopSchema, type PreStop };

/**
 * A proxy in front of the lab server (server/proxy.ts, LAB_MODE=proxy), on the request's path: a native
 * sidecar (an init container with restartPolicy: Always) or a regular second container.
 */
const SidecarSchema = z.object({
  native: z.boolean(),
  /** PROXY_ON_TERM: exit at once, or drain its open requests. */
  onTerm: z.enum(PROXY_ON_TERM_MODES),
  // Its own hook. An httpGet one would reach the proxy's port, which forwards it to the app's.
  preStop: PreStopSchema.refine((p) => p.kind !== 'httpGet', {
    message:
      "a sidecar's httpGet hook would be forwarded by the proxy to the app: use exec-sleep, exec-fail or sleep-action",
  }).default({ kind: 'none' }),
});
export type Sidecar = z.infer<typeof SidecarSchema>;

/** What a failed attempt looks like to the client: cut mid-answer, a draining 503, another 5xx. */
const RETRY_ON = ['cut', 'rejected', '5xx'] as const;
export type RetryOn = (typeof RETRY_ON)[number];

/**
 * The client's retry policy (issue 27): the first attempt goes to the pod the scenario deletes; a retry,
 * after backoffMs, to the other ready pod of the scenario (its standby replica). With idempotencyKey every
 * attempt carries the same Idempotency-Key header, which the ledger applies once.
 */
export const RetrySchema = z.object({
  /** Every attempt, the first included. */
  attempts: z.int().min(1).max(5),
  backoffMs: z.int().min(0).max(60_000),
  on: z
    .array(z.enum(RETRY_ON))
    .min(1)
    .max(3)
    .refine((on) => new Set(on).size === on.length, { message: 'each of cut, rejected, 5xx at most once' }),
  idempotencyKey: z.boolean(),
});
export type Retry = z.infer<typeof RetrySchema>;
export const RETRY_FIELDS = Object.keys(RetrySchema.shape);

/** The halves of the lab's pairs: the grace pair's, the sidecar pair's, the retries pair's, the stop-signal pair's and the edge pair's (edge.ts). */
export const LAB_PAIR_ROLES = [
  'short',
  'restored',
  'proxy-first',
  'app-first',
  'no-key',
  'with-key',
  'term-default',
  'quit-stop-signal',
  'no-prestop',
  'sleep-outlasts-lag',
] as const;
export type LabPairRole = (typeof LAB_PAIR_ROLES)[number];

const ScenarioFields = z.object({
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/, 'lower-case letters, digits and dashes, at most 42'),
  description: z.string().max(500).optional(),
  mode: z.enum(LAB_MODES),
  preStop: PreStopSchema,
  terminationGracePeriodSeconds: z.int().min(0).max(3600),
  workMs: z.int().min(1).max(600_000),
  deleteDelayMs: z.int().min(0).max(600_000),
  /** `kubectl delete --grace-period`: the delete's own grace instead of the spec's. */
  deleteGracePeriodSeconds: z.int().min(0).max(3600).optional(),
  /** The pod's activeDeadlineSeconds, when the scenario is about it running out. */
  activeDeadlineSeconds: z.int().min(1).max(3600).optional(),
  /** The container's memory limit, and MiB the server allocates on SIGTERM: killed for memory. */
  memoryLimitMiB: z.int().min(16).max(65536).optional(),
  termAllocateMiB: z.int().min(1).max(65536).optional(),
  /**
   * Two runs of the same work that a student compares: a grace too short, then restored; or (issue 26) a
   * proxy stopped first (a regular container), then stopped after the app (a native sidecar).
   */
  labPair: z.object({ id: z.string().min(1).max(64), role: z.enum(LAB_PAIR_ROLES) }).optional(),
  /** Where the work makes its side effect (a call to the run's ledger): the retries lab. */
  effect: z.enum(LAB_EFFECT_POINTS).optional(),
  retry: RetrySchema.optional(),
  /** LAB_DRAIN_SIGNAL: the signal the graceful server drains on; on any other it leaves at once (17) on SIGTERM. */
  drainSignal: DrainSignalSchema.optional(),
  /** The lab container's lifecycle.stopSignal (gate ContainerStopSignals; rendered with spec.os.name: linux). */
  stopSignal: StopSignalSchema.optional(),
});
const workOutlastsDelay = (s: { deleteDelayMs: number; workMs: number }) => s.deleteDelayMs < s.workMs;
const WORK_OUTLASTS_DELAY = {
  message: 'deleteDelayMs must be shorter than workMs, or the request ends before the delete',
  path: ['deleteDelayMs'],
};

/**
 * A scenario, as a scenario file gives it and the observation records it: with a `sidecar:` block, a
 * proxy in the pod in front of the lab server (manifests/sidecars.yaml); without, one container.
 */
export const ScenarioSchema = ScenarioFields.extend({ sidecar: SidecarSchema.optional() })
  .refine(workOutlastsDelay, WORK_OUTLASTS_DELAY)
  // The ledger is made for a scenario with a retry policy: an effect alone would have no one to call.
  .refine((s) => (s.effect ?? 'none') === 'none' || s.retry !== undefined, {
    message: 'an effect is counted by the ledger a retry scenario runs: add a retry: block (attempts: 1 for none)',
    path: ['effect'],
  })
  .superRefine((s, ctx) => {
    const problem = stopSignalProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', ...problem });
  })
  .refine((s) => !(s.retry && s.sidecar), {
    message: 'a retry scenario sends its attempts to the lab server itself: leave out the sidecar block',
    path: ['retry'],
  })
  .refine(
    (s) =>
      !(
        s.labPair &&
        (s.labPair.role === 'no-key' || s.labPair.role === 'with-key') &&
        s.retry?.idempotencyKey !== (s.labPair.role === 'with-key')
      ),
    {
      message: "the retries pair's no-key half has retry.idempotencyKey false, its with-key half true",
      path: ['labPair', 'role'],
    },
  );
export type Scenario = z.infer<typeof ScenarioSchema>;
/** The same schema under the name the scenario loader used before the observation carried the block. */
export const FileScenarioSchema = ScenarioSchema;
export type FileScenario = Scenario;

export const ScenarioFileSchema = z
  .object({
    scenarios: z.array(FileScenarioSchema).min(1),
  })
  .refine((f) => new Set(f.scenarios.map((s) => s.name)).size === f.scenarios.length, {
    message: 'scenario names must be unique',
    path: ['scenarios'],
  });

export function describePreStop(preStop: PreStop): string {
  switch (preStop.kind) {
    case 'none':
      return 'none';
    case 'exec-sleep':
      return `exec sleep ${preStop.seconds}s`;
    case 'exec-fail':
      return 'exec that fails at once';
    case 'sleep-action':
      return `sleep action ${preStop.seconds}s`;
    case 'httpGet':
      return `httpGet ${preStop.ms}ms${preStop.port ? ` to port ${preStop.port}` : ''}`;
  }
}

/** How long the hook would run if nothing stopped it, in seconds. */
export function hookDurationSeconds(preStop: PreStop): number {
  switch (preStop.kind) {
    case 'none':
    case 'exec-fail':
      return 0;
    case 'exec-sleep':
    case 'sleep-action':
      return preStop.seconds;
    case 'httpGet':
      return preStop.ms / 1000;
  }
}
