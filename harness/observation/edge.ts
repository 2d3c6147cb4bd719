// The edge observation: a rollout's evidence (rollout.ts) plus the edge's own, written once and never
// edited. The edge's access-log lines are kept as the edge pods' logs gave them (with the API's time and
// when the harness got each), only this run's (those whose RequestHost is the route's own hostname; the
// edge serves other routes too) and only the fields termlab reads (contract C2), in the edge's own order.
import { z } from 'zod';
import { EdgeScenarioSchema } from '../scenario/edge.ts';
import { PodLogSchema, RolloutObservationSchema } from './rollout.ts';

export const EDGE_SCHEMA_VERSION = 1;
export const EDGE_KIND = 'termlab.edge-observation';

export const EdgeSectionSchema = z.object({
  via: z.enum(['httproute', 'ingress']),
  /** The route as created: its kind, name, uid and the hostname the load sent as Host. */
  route: z
    .object({ kind: z.enum(['HTTPRoute', 'Ingress']), name: z.string(), uid: z.string(), host: z.string() })
    .nullable(),
  /** The Gateway (or the Ingress class's edge) and the addresses its status gave, if any. */
  gateway: z.object({ namespace: z.string(), name: z.string(), addresses: z.array(z.string()) }).nullable(),
  /** The edge's Service the load was sent to (its ClusterIP:port inside the cluster). */
  service: z
    .object({ namespace: z.string(), name: z.string(), clusterIP: z.string().nullable(), port: z.int() })
    .nullable(),
  /** Each edge pod's log from a moment before the load: only the access-log lines of this route's host, C2's fields. */
  accessLogs: z.array(PodLogSchema.extend({ ip: z.string().nullable() })),
  /** Why the access logs are missing or partial (no edge pod found, a follow that failed), null when whole. */
  accessLogProblem: z.string().nullable(),
});
export type EdgeSection = z.infer<typeof EdgeSectionSchema>;

export const EdgeObservationSchema = RolloutObservationSchema.extend({
  schemaVersion: z.literal(EDGE_SCHEMA_VERSION),
  kind: z.literal(EDGE_KIND),
  scenario: EdgeScenarioSchema,
  edge: EdgeSectionSchema,
});
export type EdgeObservation = z.infer<typeof EdgeObservationSchema>;

export function isEdgeObservation(data: unknown): boolean {
  return (data as { kind?: unknown } | null)?.kind === EDGE_KIND;
}
