// The load pod's per-request records, parsed from its log lines with a schema of the grader's own
// (the format server/load.ts writes): the one copy of what every request did.
import { z } from 'zod';
import type { PodLog } from '../../observation-rollout.ts';
import { parseLogLineJson } from '../sources.ts';

const Clock = z.object({ time: z.iso.datetime({ offset: true }), mono: z.number().min(0) });

export const LoadRecordSchema = z.object({
  event: z.literal('request'),
  seq: z.int().min(1),
  id: z.string().regex(/^L\d+$/),
  dueMono: z.number(),
  sent: Clock,
  connectedAt: Clock.nullable(),
  headersAt: Clock.nullable(),
  ended: Clock,
  status: z.int().nullable(),
  podUid: z.string().nullable(),
  outcome: z.enum(['completed', 'rejected', 'http-error', 'cut', 'failed']),
  errorCode: z.string().nullable(),
  stage: z.enum(['connect', 'request', 'body']).nullable(),
  bytes: z.int().min(0),
});
export type LoadRecord = z.infer<typeof LoadRecordSchema> & { line: number };

const StartSchema = z.object({ event: z.literal('load-start'), time: z.string(), mono: z.number(), rate: z.number(), workMs: z.number(), planned: z.int() });
const EndSchema = z.object({ event: z.literal('load-end'), time: z.string(), mono: z.number(), sent: z.int(), completed: z.int(), rejected: z.int(), failed: z.int() });

export interface LoadLog {
  start: (z.infer<typeof StartSchema> & { line: number }) | null;
  end: (z.infer<typeof EndSchema> & { line: number }) | null;
  records: LoadRecord[];
  /** Lines that name a load event but do not have its fields: a broken or edited record. */
  malformed: { line: number; problem: string }[];
}

export function parseLoadLog(log: PodLog | null): LoadLog {
  const out: LoadLog = { start: null, end: null, records: [], malformed: [] };
  log?.lines.forEach((l, line) => {
    const parsed = parseLogLineJson(l.text) as { event?: unknown } | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    const schema = parsed.event === 'request' ? LoadRecordSchema : parsed.event === 'load-start' ? StartSchema : parsed.event === 'load-end' ? EndSchema : null;
    if (!schema) return;
    const result = schema.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      out.malformed.push({ line, problem: `${issue.path.map(String).join('.') || '(line)'}: ${issue.message}` });
      return;
    }
    const data = { ...result.data, line } as never;
    if (parsed.event === 'request') out.records.push(data);
    else if (parsed.event === 'load-start') out.start = data;
    else out.end = data;
  });
  return out;
}

export const isFailure = (r: { outcome: LoadRecord['outcome'] }) => r.outcome !== 'completed';
