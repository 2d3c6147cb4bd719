import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { incompleteReasonOf, wasInterrupted } from '../../harness/observation/incomplete.ts';
import { buildObservation } from '../support/observations.ts';

describe('why a run is incomplete', () => {
  it('is the reason the run recorded, or says that none was recorded', () => {
    expect(incompleteReasonOf({ complete: false, incompleteReason: 'cleanup failed: delete pod: 500' })).toBe(
      'cleanup failed: delete pod: 500',
    );
    expect(incompleteReasonOf({ complete: false })).toBe('no reason recorded');
  });

  it('an incomplete run without a reason is graded with that statement', () => {
    const o = buildObservation();
    o.run.complete = false;
    delete o.run.incompleteReason;
    const r = grade(o);
    expect(r.verdict).toBe('inconclusive');
    expect(r.explanation).toBe('the run stopped before it finished: no reason recorded');
  });

  it('an interrupted run is one the user stopped, and only while it was incomplete', () => {
    const reason = 'interrupted (Ctrl-C) while terminating';
    expect(wasInterrupted({ complete: false, incompleteReason: reason })).toBe(true);
    expect(wasInterrupted({ complete: true, incompleteReason: reason })).toBe(false);
    expect(wasInterrupted({ complete: false, incompleteReason: 'the pod was not ready in 60s' })).toBe(false);
    expect(wasInterrupted({ complete: false })).toBe(false);
  });
});
