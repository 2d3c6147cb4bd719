// The retries part of an observation (version 6 on, issue 27): the client's attempts, each apart; the
// standby pod and the ledger pod, each with its own log as received; the ledger's count as the runner
// read it from that log, which the grader recomputes from the lines; and (version 7 on) the Service both
// lab pods stand behind, with how each retry was routed through its EndpointSlices.
import { z } from 'zod';

import { HarnessTimeSchema as HarnessTime, LogLineSchema as LogLine, RequestRecordSchema } from './parts.ts';

/** An endpoint of the retry Service as its EndpointSlice listed it (conditions as the API gives them). */
const RouteEndpointSchema = z.object({
  pod: z.string().nullable(),
  uid: z.string().nullable(),
  ready: z.boolean(),
  serving: z.boolean(),
  terminating: z.boolean(),
});

/**
 * How a retry was routed (version 7 on): the Service's EndpointSlices as read just before it was sent,
 * and the endpoint picked from them as kube-proxy picks (a ready one; none ready, a serving terminating one).
 */
export const RouteSchema = z.object({
  /** When the slices were read (the harness clock), after the backoff. */
  read: HarnessTime,
  slices: z.array(z.object({ name: z.string(), resourceVersion: z.string() })).max(16),
  endpoints: z.array(RouteEndpointSchema).max(64),
  /** The UID of the pod it was sent to; null: no endpoint could take it, and it was not sent. */
  chosen: z.string().nullable(),
});
export type Route = z.infer<typeof RouteSchema>;
export type RouteEndpoint = z.infer<typeof RouteEndpointSchema>;
/** A retry's errorCode when its route could not be read (the API lost past the harness's patience): not sent, no route. */
export const ROUTE_UNREAD = 'ROUTE_UNREAD';

/**
 * The endpoints kube-proxy sends a new connection to (pkg/proxy/topology.go CategorizeEndpoints, cluster
 * traffic policy): the ready ones; with none ready, the serving terminating ones. A route's pick is one of them.
 */
export function routeCandidates<E extends RouteEndpoint>(endpoints: readonly E[]): E[] {
  const ready = endpoints.filter((e) => e.ready);
  return ready.length ? ready : endpoints.filter((e) => e.serving && e.terminating);
}

/** One attempt of the client's request: where it went, when, and how it ended (the request's own fields). */
const AttemptSchema = RequestRecordSchema.extend({
  /** From 1; attempt 1 is the observation's `request`. */
  n: z.int().min(1).max(5),
  id: z.string().min(1),
  /** The pod the scenario deletes, or the standby replica. */
  target: z.enum(['deleted', 'standby']),
  /** A retry's route through the Service (version 7 on); attempt 1 goes to the deleted pod, as every scenario's request: none. */
  route: RouteSchema.nullable().optional(),
  /** The Idempotency-Key header it carried; null: none. */
  key: z.string().nullable(),
  sent: HarnessTime.nullable(),
  accepted: HarnessTime.nullable(),
  ended: HarnessTime.nullable(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

/** A pod the retry scenario runs beside the deleted one: its name, UID and its log as received. */
const SidePodSchema = z.object({
  name: z.string(),
  uid: z.string().min(1),
  logLines: z.array(LogLine).max(100_000),
  /** The stream broke, or never ended with the container. */
  logEndedEarly: z.boolean(),
});

export const RetriesSchema = z.object({
  standby: SidePodSchema.nullable(),
  ledger: SidePodSchema.extend({
    /** The ledger's address as the lab pods were given it (the Service's). */
    url: z.string(),
    service: z.object({
      name: z.string(),
      uid: z.string(),
      clusterIP: z.string().nullable(),
      nodePort: z.int().nullable(),
    }),
  }).nullable(),
  /** The Service both lab pods stand behind, which the retries go through (version 7 on). */
  service: z.object({ name: z.string(), uid: z.string() }).nullable().optional(),
  attempts: z.array(AttemptSchema).max(5),
  /** The ledger's count as the runner read its log: applied records and already-applied answers. */
  ledgerCount: z.object({ applied: z.int().min(0), alreadyApplied: z.int().min(0) }),
});
export type Retries = z.infer<typeof RetriesSchema>;
