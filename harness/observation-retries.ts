// The retries part of an observation (version 6 on, issue 27): the client's attempts, each apart; the
// standby pod a retry lands on and the ledger pod, each with its own log as received; and the ledger's
// count as the runner read it from that log, which the grader recomputes from the lines.
import { z } from 'zod';

import { HarnessTimeSchema as HarnessTime, LogLineSchema as LogLine, RequestRecordSchema } from './observation-parts.ts';

/** One attempt of the client's request: where it went, when, and how it ended (the request's own fields). */
const AttemptSchema = RequestRecordSchema.extend({
  /** From 1; attempt 1 is the observation's `request`. */
  n: z.int().min(1).max(5),
  id: z.string().min(1),
  /** The pod the scenario deletes, or the standby replica a retry goes to. */
  target: z.enum(['deleted', 'standby']),
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
    service: z.object({ name: z.string(), uid: z.string(), clusterIP: z.string().nullable(), nodePort: z.int().nullable() }),
  }).nullable(),
  attempts: z.array(AttemptSchema).max(5),
  /** The ledger's count as the runner read its log: applied records and already-applied answers. */
  ledgerCount: z.object({ applied: z.int().min(0), alreadyApplied: z.int().min(0) }),
});
export type Retries = z.infer<typeof RetriesSchema>;
