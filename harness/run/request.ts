// The one request each scenario protects: GET /work, read line by line so acceptance, a cut
// and a complete body are told apart from the body alone.
import { createHash } from 'node:crypto';
import { Agent, request, errors as undiciErrors } from 'undici';
import type { HarnessTime, Observation } from '../observation/schema.ts';
import type { RunClock } from './clock.ts';

/** The lab server names the pod it runs in with this response header (server/app.ts). */
const POD_UID_HEADER = 'x-pod-uid';

export interface RequestRecord {
  id: string;
  sent: HarnessTime | null;
  accepted: HarnessTime | null;
  ended: HarnessTime | null;
  status: number | null;
  bytes: number;
  /** sha256 (hex) of the body read, done line excluded; set when the body ends. */
  sha256: string | null;
  /** What the done line said, verbatim. */
  done: { bytes: number; sha256: string } | null;
  doneSeen: boolean;
  /** The pod UID the server answered with (x-pod-uid). */
  podUid: string | null;
  errorCode: string | null;
  outcome: Observation['request']['outcome'];
}

export function newRequestRecord(id: string): RequestRecord {
  return {
    id,
    sent: null,
    accepted: null,
    ended: null,
    status: null,
    bytes: 0,
    sha256: null,
    done: null,
    doneSeen: false,
    podUid: null,
    errorCode: null,
    outcome: 'not-sent',
  };
}

/** Sends the request; calls onAccepted once the accepted line is in; resolves when the body ends. */
export async function sendWork(
  baseUrl: string,
  workMs: number,
  record: RequestRecord,
  clock: RunClock,
  onAccepted: () => void,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<RequestRecord> {
  // One connection for this request alone; no timers of undici's own cut a long piece of work.
  const dispatcher = new Agent({ connections: 1, pipelining: 0, bodyTimeout: 0, headersTimeout: 30_000 });
  const digest = createHash('sha256');
  let buffered = '';
  try {
    record.sent = clock.now();
    const res = await request(`${baseUrl}/work?ms=${workMs}&id=${encodeURIComponent(record.id)}`, {
      dispatcher,
      signal,
      headers,
    });
    record.status = res.statusCode;
    const podUid = res.headers[POD_UID_HEADER];
    record.podUid = typeof podUid === 'string' ? podUid : null;
    if (res.statusCode !== 200) {
      await res.body.dump();
      record.outcome = res.statusCode === 503 ? 'rejected' : 'transport-failed';
      record.errorCode = res.statusCode === 503 ? null : `HTTP_${res.statusCode}`;
      return record;
    }
    for await (const chunk of res.body) {
      buffered += (chunk as Buffer).toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline + 1);
        buffered = buffered.slice(newline + 1);
        const event = parseEvent(line);
        if (event?.event === 'done') {
          if (
            Number.isInteger(event.bytes) &&
            event.bytes! >= 0 &&
            typeof event.digest === 'string' &&
            /^[0-9a-f]{64}$/.test(event.digest)
          ) {
            record.done = { bytes: event.bytes!, sha256: event.digest };
          }
          // A done line counts only if it vouches for exactly the bytes before it.
          record.doneSeen = event.bytes === record.bytes && event.digest === digest.copy().digest('hex');
        } else {
          digest.update(line);
          record.bytes += Buffer.byteLength(line);
        }
        if (event?.event === 'accepted' && !record.accepted) {
          record.accepted = clock.now();
          onAccepted();
        }
      }
    }
    record.outcome = record.doneSeen ? 'completed' : record.accepted ? 'cut' : 'transport-failed';
    if (!record.doneSeen) record.errorCode = 'NO_DONE_LINE';
  } catch (error) {
    record.errorCode = errorCode(error);
    record.outcome = record.accepted ? 'cut' : 'transport-failed';
  } finally {
    record.ended = clock.now();
    if (record.status === 200) record.sha256 = digest.digest('hex');
    await dispatcher.destroy().catch(() => {});
  }
  return record;
}

function parseEvent(line: string): { event?: string; bytes?: number; digest?: string } | null {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

function errorCode(error: unknown): string {
  if (error instanceof undiciErrors.UndiciError) return error.code;
  const e = error as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
  // A DOMException (an abort) carries a legacy numeric code: only a string code names the failure.
  const named = [e.code, e.cause?.code, e.name].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return named ?? 'UNKNOWN';
}
