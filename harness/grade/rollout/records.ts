// The load pod's per-request records, parsed from its log lines through the pod contract's schemas
// (the format server/load.ts writes): the one copy of what every request did.
import type { z } from 'zod';
import { LoadEndSchema, LoadRecordSchema, LoadStartSchema } from '../../../server/contract-schemas.ts';
import { formatIssue } from '../../../lib/files.ts';
import type { PodLog } from '../../observation/rollout.ts';
import { parseLogLineJson } from '../sources.ts';

export type LoadRecord = z.infer<typeof LoadRecordSchema> & { line: number };

export interface LoadLog {
  start: (z.infer<typeof LoadStartSchema> & { line: number }) | null;
  end: (z.infer<typeof LoadEndSchema> & { line: number }) | null;
  records: LoadRecord[];
  /** Lines that name a load event but do not have its fields: a broken or edited record. */
  malformed: { line: number; problem: string }[];
}

export function parseLoadLog(log: PodLog | null): LoadLog {
  const out: LoadLog = { start: null, end: null, records: [], malformed: [] };
  log?.lines.forEach((l, line) => {
    const parsed = parseLogLineJson(l.text) as { event?: unknown } | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    const schema =
      parsed.event === 'request'
        ? LoadRecordSchema
        : parsed.event === 'load-start'
          ? LoadStartSchema
          : parsed.event === 'load-end'
            ? LoadEndSchema
            : null;
    if (!schema) return;
    const result = schema.safeParse(parsed);
    if (!result.success) {
      out.malformed.push({ line, problem: formatIssue(result.error.issues[0]!, '(line)') });
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
