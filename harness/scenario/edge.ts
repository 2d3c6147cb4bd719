// The edge scenario kind (issue 42): a rollout of the lab server whose load goes through the cluster's L7
// edge (an HTTPRoute on the Gateway termlab-edge/edge, or an Ingress of class traefik) on kept-alive
// connections, with the app's own keep-alive behaviour at TERM. Told apart by `kind: edge` on its entries.
import { z } from 'zod';
import { LAB_KEEPALIVE_VARIANTS } from '../../server/contract.ts';
import { defaultLoadConnections } from '../../server/load.ts';
import { RolloutFields, type RolloutScenario, rolloutRefinements } from './rollout.ts';
import { describePreStop, PreStopSchema } from './schema.ts';

/** The two halves of the edge pair: the same load, with no sleep and with one that outlasts the edge's lag. */
export const EDGE_PAIR_ROLES = ['no-prestop', 'sleep-outlasts-lag'] as const;
export type EdgePairRole = (typeof EDGE_PAIR_ROLES)[number];

/** LAB_KEEPALIVE (contract C3): after TERM, `polite` answers with Connection: close; `naive` closes idle sockets at once. */
export const KEEP_ALIVE_VARIANTS = LAB_KEEPALIVE_VARIANTS;
export type KeepAliveVariant = (typeof KEEP_ALIVE_VARIANTS)[number];

export const EdgeScenarioSchema = z
  .strictObject({
    ...RolloutFields,
    kind: z.literal('edge'),
    /** The pods' template (the rollout re-creates every pod with the same one, as `kubectl rollout restart` does). */
    pods: z.strictObject({ mode: z.enum(['graceful', 'immediate']), preStop: PreStopSchema }),
    app: z.strictObject({
      keepAlive: z.enum(KEEP_ALIVE_VARIANTS),
      /** The app's own idle keep-alive timeout (LAB_KEEPALIVE_TIMEOUT_MS; Node's default 5000). */
      keepAliveTimeoutMs: z.int().min(100).max(600_000).default(5000),
    }),
    /** How the route is published at the edge: an HTTPRoute on the Gateway, or an Ingress. */
    via: z.enum(['httproute', 'ingress']).default('httproute'),
    load: z.strictObject({
      ...RolloutFields.load.shape,
      /** The load's pool; unset: sized from the rate and the work, as the load generator sizes it (C4). */
      connections: z.int().min(1).max(1024).optional(),
      /** LOAD_KEEPALIVE: reuse connections, as browsers and services do. */
      keepAlive: z.boolean().default(true),
      /** LOAD_METHOD: a POST is not replayed by the edge when a kept-alive connection dies under it. */
      method: z.enum(['GET', 'POST']).default('GET'),
    }),
    labPair: z.strictObject({ id: z.string().min(1).max(64), role: z.enum(EDGE_PAIR_ROLES) }).optional(),
  })
  .superRefine(rolloutRefinements);
export type EdgeScenario = z.infer<typeof EdgeScenarioSchema>;

export const EdgeFileSchema = z
  .object({ scenarios: z.array(EdgeScenarioSchema).min(1) })
  .refine((f) => new Set(f.scenarios.map((s) => s.name)).size === f.scenarios.length, {
    message: 'scenario names must be unique',
    path: ['scenarios'],
  });

/** A file is an edge file when any of its entries says `kind: edge`. */
export function isEdgeFile(data: unknown): boolean {
  const scenarios = (data as { scenarios?: unknown } | null)?.scenarios;
  return Array.isArray(scenarios) && scenarios.some((s) => (s as { kind?: unknown } | null)?.kind === 'edge');
}

/** The rollout the edge scenario runs: the same template before and after, the load's rollout fields. */
export function asRollout(s: EdgeScenario): RolloutScenario {
  const { rate, workMs, connections, durationMs } = s.load;
  return {
    kind: 'rollout',
    name: s.name,
    ...(s.description === undefined ? {} : { description: s.description }),
    replicas: s.replicas,
    maxSurge: s.maxSurge,
    maxUnavailable: s.maxUnavailable,
    terminationGracePeriodSeconds: s.terminationGracePeriodSeconds,
    from: s.pods,
    to: s.pods,
    load: { rate, workMs, connections: connections ?? defaultLoadConnections(rate, workMs), durationMs },
    changeAfterMs: s.changeAfterMs,
  };
}

/** The setup alone (no answer): what `termlab scenarios` shows before --reveal. */
export function describeEdge(s: EdgeScenario): string {
  const l = s.load;
  return `${s.replicas} replicas through the edge (${s.via}), grace ${s.terminationGracePeriodSeconds}s, ${s.pods.mode}, preStop ${describePreStop(s.pods.preStop)}, app keep-alive ${s.app.keepAlive} (idle ${s.app.keepAliveTimeoutMs / 1000}s); load ${l.rate}/s ${l.method} of ${l.workMs} ms${l.keepAlive ? ', kept alive' : ''}, restart after ${s.changeAfterMs / 1000}s`;
}
