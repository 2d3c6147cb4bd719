import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { EXIT, TermlabError } from '../errors.ts';
import { writeFileAtomic } from '../observation.ts';
import { renderHtml } from '../report/html.ts';
import { renderJunit } from '../report/junit.ts';
import { renderMarkdown } from '../report/markdown.ts';
import { VERDICT_LABEL } from '../report/format.ts';
import { runClass } from '../class/command.ts';
import { gradeWithArchives } from '../class/submission.ts';
import type { GradeRun } from './files.ts';
import { failedOrInconclusive } from './grade.ts';
import { readPredictions } from './predictions.ts';

export async function writeReports(run: GradeRun, targets: { md?: string; html?: string; junit?: string }): Promise<void> {
  if (targets.md) await writeFileAtomic(targets.md, renderMarkdown(run.results, run.pairs, run.problems));
  if (targets.html) await writeFileAtomic(targets.html, renderHtml(run.results, run.pairs, run.problems));
  if (targets.junit) await writeFileAtomic(targets.junit, renderJunit(run.results, run.pairs));
}

export function exitCodeOf(run: GradeRun): number {
  if (run.problems.length) return EXIT.badInput;
  const anyBad = run.results.some(failedOrInconclusive) || run.pairs.some(failedOrInconclusive);
  return anyBad ? EXIT.checksFailed : EXIT.ok;
}

export const gradeCommand: Command = {
  name: 'grade',
  summary: 'grade saved observation files offline (no cluster needed)',
  usage: 'termlab grade PATH... [--predictions FILE] [--json] [--md FILE] [--html FILE] [--junit FILE] [--gradebook FILE.csv] [--gradebook-json FILE] [--lab FILE]',
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: { predictions: { type: 'string' }, json: { type: 'boolean' }, md: { type: 'string' }, html: { type: 'string' }, junit: { type: 'string' },
        gradebook: { type: 'string' }, 'gradebook-json': { type: 'string' }, lab: { type: 'string' } },
    });
    if (!positionals.length) throw new TermlabError('USAGE', 'grade needs at least one observation file or directory');
    const predictions = values.predictions ? await readPredictions(values.predictions) : undefined;
    if (values.gradebook || values['gradebook-json'] || values.lab) {
      return runClass(positionals, { gradebook: values.gradebook, gradebookJson: values['gradebook-json'], lab: values.lab, predictions }, io);
    }
    const run = await gradeWithArchives(positionals, {
      predictions,
      onResult: values.json ? undefined : (r) => {
        io.out(`${VERDICT_LABEL[r.verdict]}  ${r.scenario}  (${r.source})\n    ${r.explanation}\n`);
        // The student's own prediction is graded apart from the run: show it apart.
        for (const c of r.checks.filter((x) => x.id.startsWith('prediction.'))) io.out(`    ${c.status === 'pass' ? 'prediction ✓' : `prediction ${c.status}:`} ${c.reason}\n`);
      },
      onProblem: (p) => io.err(`termlab grade: ${p}\n`),
    });
    await writeReports(run, values);
    if (values.json) io.out(JSON.stringify({ results: run.results, pairs: run.pairs, problems: run.problems }, null, 2) + '\n');
    else {
      for (const pair of run.pairs) for (const c of pair.checks) io.out(`lab pair ${pair.pairId}: ${c.status} — ${c.reason}\n`);
      io.out(`${run.results.length} graded, ${run.results.filter((r) => !failedOrInconclusive(r)).length} passed every check, ${run.problems.length} unreadable\n`);
    }
    return exitCodeOf(run);
  },
};
