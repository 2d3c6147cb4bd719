// The retries part of an observation (version 6 on, issue 27): the client's attempts, each apart; the
// standby pod a retry lands on and the ledger pod, each with its own log as received; and the ledger's
// count as the runner read it from that log, which the grader recomputes from the lines.
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: true });
const HarnessTime = z.object({ mono: z.number().min(0), wall: isoTime });
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lower-case hex');
const LogLine = z.object({ receivedAt: HarnessTime, apiTime: z.string().nullable(), text: z.string().max(64 * 1024) });

/** One attempt of the client's request: where it went, when, and how it ended (the request's own fields). */
const AttemptSchema = z.object({
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
  status: z.int().nullable(),
  bytes: z.int().min(0),
  sha256: sha256Hex.nullable(),
  done: z.object({ bytes: z.int().min(0), sha256: sha256Hex }).nullable(),
  doneSeen: z.boolean(),
  /** The pod UID the server answered with (x-pod-uid). */
  podUid: z.string().nullable(),
  errorCode: z.string().nullable(),
  outcome: z.enum(['completed', 'cut', 'rejected', 'transport-failed', 'not-sent']),
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
