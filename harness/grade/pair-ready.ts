// What each two-run pair (retries, sidecars, stop signal) checks before its own rule: both halves' evidence
// valid, both runs there, neither inconclusive. The grace pair words its halves differently ("short-grace").
import type { LabPairRole } from '../scenario/schema.ts';
import { fail, type GradeResult, inconclusive, objectUidOf, type PairResult, pass } from './types.ts';

export interface PairHalf<R extends LabPairRole> {
  role: R;
  result: GradeResult | undefined;
  /** How a missing half is named, when its role alone says too little. */
  missingName?: string;
}

/** Both halves when the pair can be judged, else the pair's inconclusive result saying why. */
export function readyPair<R extends LabPairRole>(
  pairId: string,
  halves: readonly [PairHalf<R>, PairHalf<R>],
  invalid: ReadonlySet<R>,
  options: { reportInvalidRoles?: boolean } = {},
): [GradeResult, GradeResult] | PairResult {
  const id = `pair.${pairId}`;
  const invalidRoles = halves.filter((h) => invalid.has(h.role) && !h.result).map((h) => h.role);
  if (invalidRoles.length)
    return {
      pairId,
      ...(options.reportInvalidRoles ? { invalidRoles } : {}),
      checks: [
        inconclusive(
          id,
          `the pair cannot be graded: the evidence of the ${invalidRoles.join('- and ')} run is invalid`,
        ),
      ],
    };
  const missing = halves.find((h) => !h.result);
  if (missing)
    return {
      pairId,
      checks: [inconclusive(id, `the pair needs both runs; missing the ${missing.missingName ?? missing.role} one`)],
    };
  const both: [GradeResult, GradeResult] = [halves[0].result!, halves[1].result!];
  const open = both.filter((r) => r.verdict === 'inconclusive');
  if (open.length)
    return {
      pairId,
      checks: [
        inconclusive(id, open.map((r) => `the ${r.labPair!.role} run is inconclusive: ${r.explanation}`).join('; ')),
      ],
    };
  return both;
}

/** The pair's one check: every pair also needs the same work on two pods; failed with what went wrong, else passed. */
export function pairVerdict(
  pairId: string,
  [a, b]: readonly [GradeResult, GradeResult],
  problems: string[],
  passed: string,
): PairResult {
  const id = `pair.${pairId}`;
  const all = [...problems];
  if (a.workMs !== b.workMs) all.push(`the work differs (${a.workMs} vs ${b.workMs} ms)`);
  if (!objectUidOf(a) || objectUidOf(a) === objectUidOf(b))
    all.push('both runs claim the same pod UID: they must be two pods');
  return { pairId, checks: [all.length ? fail(id, all.join('; ')) : pass(id, passed)] };
}
