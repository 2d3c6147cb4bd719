import { describe, expect, it } from 'vitest';
import { predict } from '../../harness/grade/theory.ts';
import { timelineBars } from '../../harness/grade/timeline.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

describe('the report timeline', () => {
  it('draws a hook that outlasted the grace from its start to the TERM that ended its wait, not as a point', () => {
    const scenario = {
      ...BASE_SCENARIO,
      name: 'hook-outlasts-grace',
      preStop: { kind: 'exec-sleep' as const, seconds: 10 },
      terminationGracePeriodSeconds: 5,
      workMs: 12000,
    };
    const o = buildObservation(scenario, { outcome: 'cut', exitCode: 137 });
    o.timeline.hookEnd = null;
    const bars = timelineBars(o, predict(scenario));
    const hook = bars.find((b) => b.kind === 'hook')!;
    const term = bars.find((b) => b.kind === 'term')!;
    expect(hook.end).toBe(term.start);
    expect(hook.end - hook.start).toBeGreaterThan(4);
    expect(hook.label).toBe('preStop hook (still running at TERM)');
  });
});
