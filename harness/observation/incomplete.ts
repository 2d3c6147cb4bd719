// Why a run is incomplete, as the observation records it: one reading for every grader and report.
import type { Observation } from './schema.ts';

type RunState = Pick<Observation['run'], 'complete' | 'incompleteReason'>;

/** The reason the run recorded for stopping, or a plain statement that it recorded none. */
export function incompleteReasonOf(run: RunState): string {
  return run.incompleteReason ?? 'no reason recorded';
}

/** The run was stopped by the user (Ctrl-C): the run writes its reason as `interrupted (Ctrl-C) while <phase>`. */
export function wasInterrupted(run: RunState): boolean {
  return !run.complete && /^interrupted/.test(run.incompleteReason ?? '');
}
