// The table printed at the end of a run.
import type { GradeResult } from '../grade/types.ts';
import { formatExit, VERDICT_LABEL } from '../report/format.ts';

export function summaryTable(results: GradeResult[]): string {
  const rows = [['scenario', 'preStop', 'grace', 'outcome', 'exit', 'model says', 'verdict']];
  for (const r of results) {
    // Every try is shown; one whose request the harness lost, and that ran again, says so instead of a verdict.
    const name = (r.attempt ?? 1) > 1 ? `${r.scenario} (try ${r.attempt})` : r.scenario;
    const verdict = r.supersededBy ? '↻ request lost, tried again' : VERDICT_LABEL[r.verdict];
    rows.push([name, r.preStop, `${r.graceSeconds}s`, r.outcome, formatExit(r.exitCode, r.reason), r.prediction ? `${r.prediction.outcome}/${r.prediction.exitCode}` : r.rollout ? `failures ${r.rollout.exposure}` : '—', verdict]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ').trimEnd()).join('\n') + '\n';
}
