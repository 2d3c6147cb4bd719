// Why a try did not count and runs again on a fresh pod: asked by the run (retry or not), written on a
// superseded try when it is marked (tally.ts), and shown from there by the reports.
import { leftOpen, strayedFromDesign, tooCloseToDecide } from './pairs.ts';
import type { GradeResult, RetryCause } from './types.ts';

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
