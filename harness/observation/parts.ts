// Pieces of the observation that its retries part (observation/retries.ts) shares: one definition each.
import { z } from 'zod';

export const isoTime = z.iso.datetime({ offset: true });

export const HarnessTimeSchema = z.object({ mono: z.number().min(0), wall: isoTime });

export const LogLineSchema = z.object({
  receivedAt: HarnessTimeSchema,
  /** The `timestamps=true` prefix the API adds, verbatim. */
  apiTime: z.string().nullable(),
  text: z.string().max(64 * 1024),
});

export const RequestOutcomeSchema = z.enum(['completed', 'cut', 'rejected', 'transport-failed', 'not-sent']);

export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lower-case hex');

/** The client's record of one request: what it read and how it ended. */
export const RequestRecordSchema = z.object({
  id: z.string(),
  status: z.int().nullable(),
  bytes: z.int().min(0),
  /** sha256 of the body the client read, done line excluded. */
  sha256: sha256Hex.nullable(),
  /** What the server's done line said, verbatim; null when none came. */
  done: z.object({ bytes: z.int().min(0), sha256: sha256Hex }).nullable(),
  doneSeen: z.boolean(),
  /** The pod UID the server answered with (its x-pod-uid header). */
  podUid: z.string().nullable(),
  errorCode: z.string().nullable(),
  outcome: RequestOutcomeSchema,
});
export type RequestRecord = z.infer<typeof RequestRecordSchema>;
