// The stop-signal pair (KEP-4960, manifests/stop-signal.yaml): the same work on a server that drains only on
// SIGQUIT, cut when the kubelet sends the default SIGTERM (it leaves at once, 17), completed when
// lifecycle.stopSignal SIGQUIT reaches it. A cluster that dropped the field ran SIGTERM in both: nothing was tested.
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { DEFAULT_STOP_SIGNAL } from '../scenario/stop-signal.ts';
import { pairVerdict, readyPair } from './pair-ready.ts';
import { inconclusive, type GradeResult, type PairResult } from './types.ts';

export const STOP_SIGNAL_ROLES = ['term-default', 'quit-stop-signal'] as const;
type Role = (typeof STOP_SIGNAL_ROLES)[number];

export interface StopSignalPair {
  pairId: string;
  'term-default'?: GradeResult;
  'quit-stop-signal'?: GradeResult;
  invalid: Set<Role>;
}

const planOf = (r: GradeResult) => (r.kind === 'pod' ? r.prediction?.stopSignal : undefined);

export function gradeStopSignalPair(p: StopSignalPair): PairResult {
  const id = `pair.${p.pairId}`;
  const ready = readyPair(
    p.pairId,
    [
      { role: 'term-default', result: p['term-default'] },
      { role: 'quit-stop-signal', result: p['quit-stop-signal'] },
    ],
    p.invalid,
  );
  if (!Array.isArray(ready)) return ready;
  const [term, quit] = ready;
  const asked = planOf(quit);
  // Dropped by the cluster (gate off): both halves got SIGTERM. Not the student's doing, and no lesson either way.
  if (asked && !asked.delivered)
    return {
      pairId: p.pairId,
      checks: [
        inconclusive(
          id,
          `the quit-stop-signal run tested no stop signal: ${asked.note}; run it where the gate is on (termlab run --sim --feature-gates ContainerStopSignals=true, or an API server and kubelet with --feature-gates ContainerStopSignals=true)`,
        ),
      ],
    };
  const problems: string[] = [];
  if (!asked) problems.push('the quit-stop-signal run asked for no lifecycle.stopSignal');
  const sentToTerm = planOf(term)?.sent ?? DEFAULT_STOP_SIGNAL;
  if (sentToTerm !== DEFAULT_STOP_SIGNAL)
    problems.push(`the term-default run was sent ${sentToTerm}, not the default ${DEFAULT_STOP_SIGNAL}`);
  if (term.outcome !== 'cut' || term.exitCode !== LAB_EXIT_CODES.immediate)
    problems.push(
      `the term-default run was ${term.outcome} with exit ${term.exitCode ?? 'unknown'}, not cut with ${LAB_EXIT_CODES.immediate}`,
    );
  if (quit.outcome !== 'completed') problems.push(`the quit-stop-signal run was ${quit.outcome}, not completed`);
  return pairVerdict(
    p.pairId,
    [term, quit],
    problems,
    `the same ${term.workMs / 1000}s of work on a server that drains only on ${asked!.sent} was cut when the kubelet sent ${DEFAULT_STOP_SIGNAL} (exit ${LAB_EXIT_CODES.immediate}) and completed when lifecycle.stopSignal ${asked!.sent} reached it, on two pods`,
  );
}
