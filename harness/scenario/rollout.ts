// The rollout scenario kind: a Deployment of the lab server behind a NodePort Service, a steady
// load through the Service, and a template change during the load. Told apart from the pod
// scenarios by `kind: rollout` on every entry of its file.
import { z } from 'zod';
import { describePreStop, PreStopSchema } from './schema.ts';

const IntOrPercent = z.union([
  z.int().min(0).max(100),
  z.string().regex(/^\d{1,3}%$/, 'a whole percentage such as 25%'),
]);

/** One version of the pod template: what the scenario changes between the two. */
const RolloutTemplateSchema = z.strictObject({
  mode: z.enum(['graceful', 'immediate']),
  preStop: PreStopSchema,
});
export type RolloutTemplate = z.infer<typeof RolloutTemplateSchema>;

/** A rollout's fields, which the edge scenarios (edge.ts) share. */
export const RolloutFields = {
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/, 'lower-case letters, digits and dashes, at most 42'),
  description: z.string().max(500).optional(),
  replicas: z.int().min(1).max(10),
  maxSurge: IntOrPercent,
  maxUnavailable: IntOrPercent,
  terminationGracePeriodSeconds: z.int().min(1).max(600),
  load: z.strictObject({
    /** Requests per second through the Service. */
    rate: z.int().min(1).max(2000),
    /** Each request's own length on the server (GET /work?ms=). */
    workMs: z.int().min(1).max(60_000),
    /** The load generator's bounded pool. */
    connections: z.int().min(1).max(1024).default(32),
    /** How long the load runs; it must outlast the rollout. */
    durationMs: z.int().min(1000).max(600_000),
  }),
  /** After the load has completed requests steadily for a second: when the template is changed. */
  changeAfterMs: z.int().min(0).max(600_000),
};

type Refinable = {
  changeAfterMs: number;
  load: { durationMs: number };
  maxSurge: number | string;
  maxUnavailable: number | string;
};
/** What a rollout's fields must hold together (the Deployment API's rule among them). */
export function rolloutRefinements(s: Refinable, ctx: z.RefinementCtx): void {
  if (s.changeAfterMs >= s.load.durationMs)
    ctx.addIssue({
      code: 'custom',
      message: 'changeAfterMs must be shorter than load.durationMs, or the change comes after the load',
      path: ['changeAfterMs'],
    });
  if (s.maxSurge === 0 && s.maxUnavailable === 0)
    ctx.addIssue({
      code: 'custom',
      message: 'maxSurge and maxUnavailable cannot both be 0 (the Deployment API refuses it)',
      path: ['maxUnavailable'],
    });
}

export const RolloutScenarioSchema = z
  .strictObject({
    kind: z.literal('rollout'),
    name: RolloutFields.name,
    description: RolloutFields.description,
    replicas: RolloutFields.replicas,
    maxSurge: RolloutFields.maxSurge,
    maxUnavailable: RolloutFields.maxUnavailable,
    terminationGracePeriodSeconds: RolloutFields.terminationGracePeriodSeconds,
    /** The template the Deployment is created with, and the one it is changed to under load. */
    from: RolloutTemplateSchema,
    to: RolloutTemplateSchema,
    load: RolloutFields.load,
    changeAfterMs: RolloutFields.changeAfterMs,
  })
  .superRefine(rolloutRefinements);
export type RolloutScenario = z.infer<typeof RolloutScenarioSchema>;

export const RolloutFileSchema = z
  .object({
    scenarios: z.array(RolloutScenarioSchema).min(1),
  })
  .refine((f) => new Set(f.scenarios.map((s) => s.name)).size === f.scenarios.length, {
    message: 'scenario names must be unique',
    path: ['scenarios'],
  });

/** A file is a rollout file when any of its entries says `kind: rollout`. */
export function isRolloutFile(data: unknown): boolean {
  const scenarios = (data as { scenarios?: unknown } | null)?.scenarios;
  return Array.isArray(scenarios) && scenarios.some((s) => (s as { kind?: unknown } | null)?.kind === 'rollout');
}

function describeTemplate(t: RolloutTemplate): string {
  return `${t.mode}, preStop ${describePreStop(t.preStop)}`;
}

export function describeRollout(s: RolloutScenario): string {
  return `${s.replicas} replicas, maxSurge ${s.maxSurge}, maxUnavailable ${s.maxUnavailable}, grace ${s.terminationGracePeriodSeconds}s; template ${describeTemplate(s.from)} → ${describeTemplate(s.to)}; load ${s.load.rate}/s of ${s.load.workMs} ms for ${s.load.durationMs / 1000}s, change after ${s.changeAfterMs / 1000}s`;
}

/** Seconds a rollout's objects may live: load, grace, hooks and a margin (the load pod's deadline). */
export function rolloutDeadlineSeconds(s: RolloutScenario): number {
  const MARGIN_SECONDS = 120;
  // Whole seconds: activeDeadlineSeconds is an integer field (a real API refuses 270.2; the sim took it).
  return Math.ceil((s.load.durationMs + s.load.workMs) / 1000) + s.terminationGracePeriodSeconds * 2 + MARGIN_SECONDS;
}
