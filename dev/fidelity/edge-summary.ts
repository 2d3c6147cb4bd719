// One edge scenario's run (issue 42), reduced to what the edge lesson depends on: the edge model's grade, the
// failed requests by cause and by the answer the client got, the edge's measured lag and the old pods' TERM → exit.
// Pure: observation in, summary out. The grade is the grader's own (harness/grade/edge), not a second copy.
import { z } from 'zod';
import { edgeFailures, gradeEdge, rolloutView } from '../../harness/grade/edge/grade.ts';
import { podFacts } from '../../harness/grade/rollout/facts.ts';
import type { LoadRecord } from '../../harness/grade/rollout/records.ts';
import type { EdgeObservation } from '../../harness/observation/edge.ts';

/** Failures the grade puts before the rollout's change: not the termination's, never counted as failed. */
export const BEFORE_THE_CHANGE = 'before the change';

export const EdgeRunSummarySchema = z.object({
  scenario: z.string(),
  repetition: z.int(),
  complete: z.boolean(),
  incompleteReason: z.string().nullable(),
  /** The edge model's verdict on the run (matches-model, differs, inconclusive). */
  verdict: z.string(),
  requests: z.int(),
  /** Failed requests, those before the change left out. */
  failed: z.int(),
  /** The model's exposure for each cause: the same on both sides (it follows from the scenario). */
  model: z.record(z.string(), z.enum(['expected', 'possible', 'none'])),
  /** Failed requests each of the model's causes counts (the grade's own count: the pod's causes grouped as it groups them). */
  seen: z.record(z.string(), z.int()),
  /** Failed requests by attributed cause (harness/edge/attribute.ts, else the rollout's cause at the pod). */
  causes: z.record(z.string(), z.int()),
  /** Failed requests by cause, then by the answer the client got (answerKind). */
  answers: z.record(z.string(), z.record(z.string(), z.int())),
  /** Each failure's lag: seconds the edge was seen still sending to the endpoint after the slice dropped it. */
  lagSeconds: z.array(z.number()),
  /** Each old pod's TERM → its container ended (seconds), where both are known. */
  termToEndedSeconds: z.array(z.number()),
  /** Each old pod's exit code, null where unknown. */
  oldPodExitCodes: z.array(z.int().nullable()),
  /** Requests the edge logged as retried by its own retry middleware. */
  edgeRetried: z.int(),
});
export type EdgeRunSummary = z.infer<typeof EdgeRunSummarySchema>;

const round = (v: number) => Math.round(v * 1000) / 1000;

/**
 * The answer a failed request got, with what varies per request (the app's request id) left out: the edge's own
 * answers by status and body ("502 \"Bad Gateway\"", "503 \"no available server\\n\""), the app's by its event
 * ("503 from the app: rejected draining"), none at all by the client's error ("no answer: ETIMEDOUT").
 */
export function answerKind(r: Pick<LoadRecord, 'status' | 'bodyHead' | 'outcome' | 'errorCode'>): string {
  if (r.status === null) return `no answer: ${r.errorCode ?? r.outcome}`;
  const body = r.bodyHead ?? '';
  let app: { event?: unknown; reason?: unknown } | null = null;
  if (body.startsWith('{'))
    try {
      app = JSON.parse(body) as typeof app;
    } catch {
      // The first 120 bytes of a longer JSON body: still the app's.
      app = { event: /"event":"([^"]+)"/.exec(body)?.[1] ?? 'answer' };
    }
  const what =
    app && typeof app.event === 'string'
      ? `from the app: ${app.event}${typeof app.reason === 'string' ? ` ${app.reason}` : ''}`
      : JSON.stringify(body);
  // An answer that began and then broke (a 200 whose body was cut) says so.
  const broke = r.status < 300 && r.errorCode ? `, then ${r.errorCode}` : '';
  return `${r.status} ${what}${broke}`;
}

export function summarizeEdge(o: EdgeObservation, repetition: number): EdgeRunSummary {
  const grade = gradeEdge(o);
  const { failures } = edgeFailures(o);
  const answers: EdgeRunSummary['answers'] = {};
  for (const f of failures) {
    if (f.cause === BEFORE_THE_CHANGE) continue;
    const byKind = (answers[f.cause] ??= {});
    const kind = answerKind(f.record);
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  const old = podFacts(rolloutView(o)).filter((p) => p.revision === 'old');
  return {
    scenario: o.scenario.name,
    repetition,
    complete: o.run.complete,
    incompleteReason: o.run.incompleteReason ?? null,
    verdict: grade.verdict,
    requests: grade.rollout.requests.total,
    failed: failures.filter((f) => f.cause !== BEFORE_THE_CHANGE).length,
    model: Object.fromEntries(grade.edge.expectations.map((e) => [e.cause, e.exposure])),
    seen: Object.fromEntries(grade.edge.expectations.map((e) => [e.cause, e.seen])),
    causes: grade.edge.causes,
    answers,
    lagSeconds: failures
      .map((f) => f.lagSeconds)
      .filter((l): l is number => l !== null)
      .map(round)
      .sort((a, b) => a - b),
    termToEndedSeconds: old.flatMap((p) => (p.term !== null && p.ended !== null ? [round(p.ended - p.term)] : [])),
    oldPodExitCodes: old.map((p) => p.exitCode),
    edgeRetried: grade.edge.edgeRetried,
  };
}
