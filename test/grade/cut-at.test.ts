// "The model says it is cut at X s": X is when the request is cut, which for a server that leaves at once on
// TERM (exit 17) is the TERM, not the SIGKILL the grace would bring later.
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { buildObservation } from '../support/observations.ts';

const immediate: Scenario = {
  name: 'leaves-at-term',
  mode: 'immediate',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 30,
  workMs: 5_000,
  deleteDelayMs: 1_000,
};

describe('the cut time the outcome check names', () => {
  it('an immediate server is cut at its TERM, and the check says so, not the SIGKILL 30 s on', () => {
    const r = grade(buildObservation(immediate, { outcome: 'completed', exitCode: 0, exitAt: 5 }));
    const check = r.checks.find((c) => c.id === 'outcome.request');
    expect(r.prediction).toMatchObject({ outcome: 'cut', exitCode: 17 });
    const termAt = r.prediction!.termAt;
    expect(r.prediction!.killAt - termAt).toBeGreaterThan(20);
    expect(check?.status).toBe('fail');
    expect(check?.reason).toContain(`cut at ${Math.round(termAt * 1000) / 1000}s after the delete`);
    expect(check?.reason).toContain('at its TERM');
  });
});
