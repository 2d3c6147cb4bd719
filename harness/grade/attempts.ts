// Tries of one scenario in one run: a try that did not count (its request lost, a pair half its own times
// kept from testing its design) ran again on a fresh pod.
// Every try is kept and shown; only the last counts for the exit code and the lab pair.
import { leftOpen, strayedFromDesign, tooCloseToDecide } from './pairs.ts';
import { GradeTally } from './tally.ts';
import type { GradeResult } from './types.ts';

/** Marks every try but the last of each scenario of each run (one folder, one run id) as superseded (the tally's rule). */
export function markSuperseded(results: GradeResult[]): GradeResult[] {
  GradeTally.of(results).markSuperseded(results);
  return results;
}

/** The results that count: each scenario's last try. */
export const counted = (results: GradeResult[]) => results.filter((r) => !r.supersededBy);

/** Why a try is run again on a fresh pod, in a few words (the verdict column) and in full (its progress line). */
export interface RetryCause {
  label: string;
  reason: string;
}

/**
 * Why a try is run again on a fresh pod, or null when its grade stands: a lost request, or a pair half whose
 * own times (a late kubelet, a delete the API took late) kept it from testing its design, left it too
 * close to call, or left it open. Never a verdict the kubelet earned. The run's progress and the class report say the same.
 */
export function retryCause(r: GradeResult): RetryCause | null {
  if (r.lostPath) return { label: 'request lost', reason: `lost its request (${r.lostPath.slice(0, 160)})` };
  const strayed = strayedFromDesign(r);
  if (strayed) return { label: 'did not test its design', reason: `did not test its design: it ${strayed}` };
  const close = tooCloseToDecide(r);
  if (close) return { label: 'too close to call', reason: close };
  const open = leftOpen(r);
  return open ? { label: 'inconclusive', reason: open } : null;
}

export const retryReason = (r: GradeResult): string | null => retryCause(r)?.reason ?? null;
