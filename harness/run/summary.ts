// The table printed at the end of a run.
import type { GradeResult } from '../grade/types.ts';
import { formatExit, supersededLabel, tryName, VERDICT_LABEL } from '../report/format.ts';

/** `hidden`: no predictions sealed and no --reveal: the setups alone, no outcome, exit, model's answer or verdict. */
export function summaryTable(results: GradeResult[], hidden = false): string {
  const rows = [
    hidden
      ? ['scenario', 'preStop', 'grace']
      : ['scenario', 'preStop', 'grace', 'outcome', 'exit', 'model says', 'verdict'],
  ];
  for (const r of results) {
    if (hidden) {
      rows.push([tryName(r), r.preStop, `${r.graceSeconds}s`]);
      continue;
    }
    // Every try is shown; one that ran again says why instead of a verdict.
    const name = tryName(r);
    const verdict = r.supersededBy ? supersededLabel(r) : VERDICT_LABEL[r.verdict];
    rows.push([
      name,
      r.preStop,
      `${r.graceSeconds}s`,
      r.outcome,
      formatExit(r.exitCode, r.reason),
      r.prediction
        ? `${r.prediction.outcome}/${r.prediction.exitCode}`
        : r.rollout
          ? `failures ${r.rollout.exposure}`
          : '—',
      verdict,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

interface Ending {
  results: GradeResult[];
  pairs: { pairId: string; checks: { status: string }[] }[];
  problems: string[];
  failures: { scenario: string; error: { code: string } }[];
  /** The answers are hidden (no predictions sealed, no --reveal): the reasons that tell them are too. */
  hidden?: boolean;
  /** How the run was stopped ("interrupted (Ctrl-C)", "interrupted (SIGTERM)"), or null when it was not. */
  interrupted?: string | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The run's last line when it exits non-zero: why, in the words of the table above it. */
export function exitReason(code: number, ending: Ending): string {
  const counted = ending.results.filter((r) => !r.supersededBy);
  const by = (v: GradeResult['verdict']) => counted.filter((r) => r.verdict === v).length;
  const wrong = counted.filter((r) =>
    r.checks.some((c) => c.id === 'prediction.vs-model' && c.status !== 'pass'),
  ).length;
  const unpredicted = counted.filter((r) =>
    r.checks.some((c) => c.id === 'prediction.present' && c.status !== 'pass'),
  ).length;
  const otherChecks = counted.filter(
    (r) =>
      r.verdict === 'matches-model' && r.checks.some((c) => c.status !== 'pass' && !c.id.startsWith('prediction.')),
  ).length;
  const pairs = ending.pairs.filter((p) => p.checks.some((c) => c.status !== 'pass')).length;
  const answers = [
    by('differs-from-model')
      ? `${plural(by('differs-from-model'), 'scenario')} differ${by('differs-from-model') === 1 ? 's' : ''} from the model`
      : '',
    by('evidence-invalid') ? `${plural(by('evidence-invalid'), 'observation')} with invalid evidence` : '',
    by('inconclusive') ? `${plural(by('inconclusive'), 'scenario')} inconclusive` : '',
    otherChecks ? `${plural(otherChecks, 'scenario')} with a check not passed` : '',
    wrong ? `${plural(wrong, 'prediction')} differ${wrong === 1 ? 's' : ''} from the model's answer` : '',
    unpredicted ? `${plural(unpredicted, 'scenario')} without a prediction` : '',
    pairs ? `${plural(pairs, 'lab pair')} not passed` : '',
  ].filter(Boolean);
  const reasons = [
    ...(ending.hidden ? (answers.length ? ['results hidden until you predict (--reveal shows them)'] : []) : answers),
    ending.problems.length
      ? `${plural(ending.problems.length, 'file')} that could not be written or graded (above)`
      : '',
    ...[...new Set(ending.failures.map((f) => f.error.code))].map(
      (c) =>
        `${ending.failures
          .filter((f) => f.error.code === c)
          .map((f) => f.scenario)
          .join(', ')} ended early (${c})`,
    ),
  ].filter(Boolean);
  if (ending.interrupted) return `exit ${code}: ${ending.interrupted}`;
  const last = `exit ${code}: ${reasons.length ? reasons.join('; ') : 'see the lines above'}`;
  // Only the predictions keep it from 0: the lab worked, and a student should not read exit 1 as a broken run.
  const predictionsOnly = (wrong || unpredicted) && reasons.length === (wrong ? 1 : 0) + (unpredicted ? 1 : 0);
  if (code === 1 && predictionsOnly)
    return `the lab worked: every scenario ran and matches the model; exit 1 here grades your predictions, not the run (a wrong prediction is worth understanding: the report says why the kubelet did what it did)\n${last}`;
  return last;
}
