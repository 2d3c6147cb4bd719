// The one request each scenario protects: GET /work, read line by line so acceptance, a cut
// and a complete body are told apart from the body alone.
import { createHash } from 'node:crypto';
import { Agent, request, errors as undiciErrors } from 'undici';
import type { HarnessTime, Observation } from '../observation.ts';
import type { RunClock } from './clock.ts';

export interface RequestRecord {
  id: string;
  sent: HarnessTime | null;
  accepted: HarnessTime | null;
  ended: HarnessTime | null;
  status: number | null;
  bytes: number;
  doneSeen: boolean;
  errorCode: string | null;
  outcome: Observation['request']['outcome'];
}

export function newRequestRecord(id: string): RequestRecord {
  return { id, sent: null, accepted: null, ended: null, status: null, bytes: 0, doneSeen: false, errorCode: null, outcome: 'not-sent' };
}

/** Sends the request; calls onAccepted once the accepted line is in; resolves when the body ends. */
export async function sendWork(baseUrl: string, workMs: number, record: RequestRecord, clock: RunClock, onAccepted: () => void, signal: AbortSignal): Promise<RequestRecord> {
  // One connection for this request alone; no timers of undici's own cut a long piece of work.
  const dispatcher = new Agent({ connections: 1, pipelining: 0, bodyTimeout: 0, headersTimeout: 30_000 });
  const digest = createHash('sha256');
  let buffered = '';
  try {
    record.sent = clock.now();
    const res = await request(`${baseUrl}/work?ms=${workMs}&id=${encodeURIComponent(record.id)}`, { dispatcher, signal });
    record.status = res.statusCode;
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
    await dispatcher.destroy().catch(() => {});
  }
  return record;
}

function parseEvent(line: string): { event?: string; bytes?: number; digest?: string } | null {
  try { return JSON.parse(line); } catch { return null; }
}

function errorCode(error: unknown): string {
  if (error instanceof undiciErrors.UndiciError) return error.code;
  const e = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  return e.code ?? e.cause?.code ?? e.name ?? 'UNKNOWN';
}
