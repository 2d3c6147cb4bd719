// Tries of one scenario in one run: a try that did not count (its request lost, a pair half its own times
// kept from testing its design) ran again on a fresh pod.
// Every try is kept and shown; only the last counts for the exit code and the lab pair.
import { retryCause } from './retry-cause.ts';
import { GradeTally } from './tally.ts';
import type { GradeResult } from './types.ts';

/** Marks every try but the last of each scenario of each run (one folder, one run id) as superseded (the tally's rule). */
export function markSuperseded(results: GradeResult[]): GradeResult[] {
  GradeTally.of(results).markSuperseded(results);
  return results;
}

/** The results that count: each scenario's last try. */
export const counted = (results: GradeResult[]) => results.filter((r) => !r.supersededBy);

export const retryReason = (r: GradeResult): string | null => retryCause(r)?.reason ?? null;
