// The fidelity comparison: it must fail when the sides disagree, and pass when they agree.
import { describe, expect, it } from 'vitest';
import { compareSides, MEDIAN_TOLERANCE_SECONDS } from '../../cluster/fidelity/compare.ts';
import type { RunSummary, SideFile } from '../../cluster/fidelity/summary.ts';

function run(over: Partial<RunSummary> & { term?: number }, repetition = 1): RunSummary {
  const { term = 1.8, ...rest } = over;
  return {
    scenario: 'no-prestop', repetition, complete: true, incompleteReason: null, outcome: 'completed', exitCode: 0, reason: 'Completed', phase: 'Succeeded',
    eventReasons: ['Created', 'Killing', 'Pulled', 'Scheduled', 'Started'], offsets: { hookStart: null, term, ended: 9.2, deleted: 9.5 }, hookLaunchLagMs: null, ...rest,
  };
}
const side = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({ side: name, cluster: name, recordedAt: '2026-01-01T00:00:00Z', runs });

describe('fidelity comparison', () => {
  it('agrees when outcomes match and medians are within the tolerance', () => {
    const [c] = compareSides(side('sim', [run({ term: 1.7 }, 1), run({ term: 1.9 }, 2), run({ term: 1.6 }, 3)]), side('node', [run({ term: 1.8 }, 1), run({ term: 1.85 }, 2), run({ term: 2.2 }, 3)]));
    expect(c!.disagreements).toEqual([]);
    expect(c!.sim!.offsets.term).toEqual({ median: 1.7, min: 1.6, max: 1.9, n: 3 });
  });

  it('disagrees on exit code, reason and event reasons', () => {
    const [c] = compareSides(side('sim', [run({})]), side('node', [run({ exitCode: 137, reason: 'OOMKilled', eventReasons: ['Killing', 'Unhealthy'] })]));
    expect(c!.disagreements.map((d) => d.split(':')[0])).toEqual(['exitCode', 'reason', 'eventReasons']);
  });

  it('disagrees when a median is off by more than the tolerance, or an offset is seen on one side only', () => {
    const offBy = MEDIAN_TOLERANCE_SECONDS + 0.01;
    const [c] = compareSides(side('sim', [run({ term: 0.12 })]), side('node', [run({ term: 0.12 + offBy, offsets: { hookStart: 1.5, term: 0.12 + offBy, ended: 9.2, deleted: 9.5 } })]));
    expect(c!.disagreements).toEqual(['hookStart: seen only on the real side', expect.stringMatching(/^term: median 0\.12s on the sim/)]);
  });
});
