// A rollout or an edge run the harness stopped (Ctrl-C while rolling out) is never a fail: what it did not see
// may have come later, and its cleanup deletes the Deployment under the load. Made from the node's recordings by
// cutting the load log where the run would have stopped: before the first request that failed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gradeEdge } from '../../harness/grade/edge/grade.ts';
import { unclaimedIfStopped } from '../../harness/grade/rollout/grade.ts';
import { fail, inconclusive, pass } from '../../harness/grade/types.ts';
import { EdgeObservationSchema } from '../../harness/observation/edge.ts';
import type { RolloutObservation } from '../../harness/observation/rollout.ts';

const fixture = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));

/** The recording as a run stopped at its first failed request would have left it. */
function stoppedBeforeFirstFailure<T extends { run: any; evidence: { loadLog: any } }>(o: T, complete: boolean): T {
  const lines = o.evidence.loadLog.lines as { text: string }[];
  const first = lines.findIndex((l) => /"event":"request"/.test(l.text) && !/"outcome":"completed"/.test(l.text));
  expect(first).toBeGreaterThan(1);
  o.evidence.loadLog.lines = lines.slice(0, first);
  o.run.complete = complete;
  if (!complete) o.run.incompleteReason = 'interrupted (Ctrl-C) while rolling out';
  return o;
}

const readEdge = () => EdgeObservationSchema.parse(fixture('./fixtures/edge/node-edge-no-prestop.observation.json'));

describe('an edge run stopped by the harness (the node, edge-no-prestop)', () => {
  it('is inconclusive, naming the stop, with no check failed', () => {
    const r = gradeEdge(stoppedBeforeFirstFailure(readEdge(), false));
    expect(r.verdict).toBe('inconclusive');
    expect(r.checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(r.checks.find((c) => c.id === 'outcome.run-complete')?.reason).toMatch(/interrupted \(Ctrl-C\)/);
  });

  it('the same cut in a run that says it completed differs from the model: no failure where one was expected', () => {
    const r = gradeEdge(stoppedBeforeFirstFailure(readEdge(), true));
    expect(r.verdict).toBe('differs-from-model');
  });
});

describe("a rollout's checks when the harness stopped it", () => {
  const stopped = {
    complete: false,
    incompleteReason: 'interrupted (Ctrl-C) while rolling out',
  } as RolloutObservation['run'];
  const checks = [
    fail('rollout.model', 'the model expects requests to fail at the old pods, but none did'),
    pass('a', 'b'),
  ];

  it('turns each fail into inconclusive, saying why, and leaves the rest', () => {
    expect(unclaimedIfStopped(stopped, checks)).toEqual([
      inconclusive(
        'rollout.model',
        'the model expects requests to fail at the old pods, but none did (but interrupted (Ctrl-C) while rolling out: the rest of the rollout was not observed)',
      ),
      pass('a', 'b'),
    ]);
  });

  it('leaves a whole run alone', () => {
    expect(unclaimedIfStopped({ ...stopped, complete: true }, checks)).toEqual(checks);
  });
});
