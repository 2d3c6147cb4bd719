import { z } from 'zod';

export const PreStopSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({ kind: z.literal('exec-sleep'), seconds: z.number().min(0).max(600) }),
  /** An exec hook that fails at once (`lab-hook fail`). */
  z.object({ kind: z.literal('exec-fail') }),
  z.object({ kind: z.literal('sleep-action'), seconds: z.int().min(0).max(600) }),
  z.object({
    kind: z.literal('httpGet'), ms: z.int().min(0).max(600_000),
    /** A port other than the server's (one nothing listens on makes the hook fail). */
    port: z.int().min(1).max(65535).optional(),
  }),
]);
export type PreStop = z.infer<typeof PreStopSchema>;

export const ScenarioSchema = z.object({
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/, 'lower-case letters, digits and dashes, at most 42'),
  description: z.string().max(500).optional(),
  mode: z.enum(['graceful', 'immediate', 'ignore-term']),
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
  /** Two runs of the same work that a student compares: a grace too short, then restored. */
  labPair: z.object({ id: z.string().min(1).max(64), role: z.enum(['short', 'restored']) }).optional(),
}).refine((s) => s.deleteDelayMs < s.workMs, { message: 'deleteDelayMs must be shorter than workMs, or the request ends before the delete', path: ['deleteDelayMs'] });
export type Scenario = z.infer<typeof ScenarioSchema>;

export const ScenarioFileSchema = z.object({
  scenarios: z.array(ScenarioSchema).min(1),
}).refine((f) => new Set(f.scenarios.map((s) => s.name)).size === f.scenarios.length, {
  message: 'scenario names must be unique', path: ['scenarios'],
});

export function describePreStop(preStop: PreStop): string {
  switch (preStop.kind) {
    case 'none': return 'none';
    case 'exec-sleep': return `exec sleep ${preStop.seconds}s`;
    case 'exec-fail': return 'exec that fails at once';
    case 'sleep-action': return `sleep action ${preStop.seconds}s`;
    case 'httpGet': return `httpGet ${preStop.ms}ms${preStop.port ? ` to port ${preStop.port}` : ''}`;
  }
}

/** How long the hook would run if nothing stopped it, in seconds. */
export function hookDurationSeconds(preStop: PreStop): number {
  switch (preStop.kind) {
    case 'none':
    case 'exec-fail': return 0;
    case 'exec-sleep':
    case 'sleep-action': return preStop.seconds;
    case 'httpGet': return preStop.ms / 1000;
  }
}
