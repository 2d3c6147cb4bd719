import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

const short: Scenario = { ...BASE_SCENARIO, labPair: { id: 'grace', role: 'short' as const } };
const restored: Scenario = {
  ...BASE_SCENARIO,
  name: 'restored-grace',
  terminationGracePeriodSeconds: 15,
  labPair: { id: 'grace', role: 'restored' as const },
};

function result(
  scenario: Scenario,
  source: string,
  runId: string,
  uid: string,
  actual?: Parameters<typeof buildObservation>[1],
) {
  const o = buildObservation(scenario, actual, uid);
  o.run.runId = runId;
  return grade(o, { source });
}

describe('lab pairs', () => {
  it('pairs only within one run of one submission', () => {
    const pairs = gradePairs([
      // ada's short-grace run was (wrongly) completed; bob's pair is right. Same pair id, same run id.
      result(short, 'class/ada/short-grace.observation.json', 'run-1', 'uid-a1', { outcome: 'completed', exitCode: 0 }),
      result(restored, 'class/ada/restored-grace.observation.json', 'run-1', 'uid-a2'),
      result(short, 'class/bob/short-grace.observation.json', 'run-1', 'uid-b1'),
      result(restored, 'class/bob/restored-grace.observation.json', 'run-1', 'uid-b2'),
      // cy handed in halves of two different runs: neither run has a pair.
      result(short, 'class/cy/short-grace.observation.json', 'run-2', 'uid-c1'),
      result(restored, 'class/cy/restored-grace.observation.json', 'run-3', 'uid-c2'),
    ]);
    expect(pairs.map((p) => [p.pairId, p.checks[0]!.status])).toEqual([
      ['grace', 'fail'],
      ['grace', 'pass'],
      ['grace', 'inconclusive'],
      ['grace', 'inconclusive'],
    ]);
    expect(pairs[0]!.checks[0]!.reason).toContain('the short-grace run (5s) was completed, not cut');
    expect(pairs[2]!.checks[0]!.reason).toContain('missing the restored-grace one');
  });
});
