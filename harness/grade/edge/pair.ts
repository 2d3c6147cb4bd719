// The edge pair: the same load through the edge, once with no preStop (requests the edge still sends a
// terminating pod fail) and once with a sleep that outlasts the edge's lag (none does). It passes when the
// sleep is what removed the edge's failures: the same load and work, failures attributed to the edge's lag
// in the first half, none at all in the second.
import { pairVerdict, readyPair } from '../pair-ready.ts';
import type { GradeResult, PairResult } from '../types.ts';

export interface EdgePair {
  pairId: string;
  'no-prestop'?: GradeResult;
  'sleep-outlasts-lag'?: GradeResult;
  invalid: Set<'no-prestop' | 'sleep-outlasts-lag'>;
}

const LAG = 'edge-routed-to-removed-endpoint';

export function gradeEdgePair(p: EdgePair): PairResult {
  const ready = readyPair(
    p.pairId,
    [
      { role: 'no-prestop', result: p['no-prestop'] },
      { role: 'sleep-outlasts-lag', result: p['sleep-outlasts-lag'] },
    ],
    p.invalid,
  );
  if (!Array.isArray(ready)) return ready;
  const [bare, slept] = ready;
  const problems: string[] = [];
  if (bare.kind !== 'rollout' || slept.kind !== 'rollout' || !bare.edge || !slept.edge)
    return pairVerdict(p.pairId, ready, ['both halves must be edge scenarios'], '');
  const lagFailures = bare.edge.causes[LAG] ?? 0;
  const sleptFailed = Object.entries(slept.edge.causes)
    .filter(([cause]) => cause !== 'before the change')
    .reduce((n, [, k]) => n + k, 0);
  if (lagFailures === 0)
    problems.push('the no-preStop run had no request fail from the edge still routing to a terminating pod');
  if (sleptFailed > 0) problems.push(`the run whose sleep outlasts the lag still had ${sleptFailed} failed request(s)`);
  const load = (r: GradeResult) => r.rollout?.requests.total ?? 0;
  if (bare.edge.via !== slept.edge.via) problems.push(`the routes differ (${bare.edge.via} vs ${slept.edge.via})`);
  return pairVerdict(
    p.pairId,
    ready,
    problems,
    `the same load through the edge: ${lagFailures} of ${load(bare)} requests failed from the edge's lag with no preStop, none of ${load(slept)} with a sleep longer than the lag`,
  );
}
