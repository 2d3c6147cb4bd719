import type { CommandModule, Values } from '../../lib/command.ts';
import { TermlabError } from '../../lib/errors.ts';
import { type ClassOptions, runClass } from '../class/command.ts';
import { gradeWithArchives } from '../class/submission.ts';
import { graceCaption, predictionLines, VERDICT_LABEL } from '../report/format.ts';
import { requestsStrip } from '../report/rollout.ts';
import { formatted, isData } from '../../lib/output-format.ts';
import { escapeTerminal as t } from '../../lib/terminal.ts';
import { writeReports } from '../report/write.ts';
import { boundHeapGrowth, exitCodeOf } from './files.ts';
import { readPredictions } from './predictions.ts';
import type { gradeFlags } from './flags.ts';
import type { GradeResult } from './types.ts';

/** One result as the terminal shows it; every string from the file is escaped. */
function formatResult(r: GradeResult): string {
  const lines = [`${VERDICT_LABEL[r.verdict]}  ${t(r.scenario)}  (${t(r.source)})`, `    ${t(r.explanation)}`];
  // The chart's caption, the same sentence: what the grace did and what it meant for the request.
  const caption = graceCaption(r);
  if (caption) lines.push(`    ${t(caption)}`);
  for (const note of r.notes) lines.push(`    note: ${t(note)}`);
  if (r.rollout) for (const line of requestsStrip(r.rollout).split('\n')) lines.push(`    ${t(line)}`);
  // The student's own prediction is graded apart from the run: show it apart.
  for (const line of predictionLines(r)) lines.push(`    ${line}`);
  return lines.join('\n') + '\n';
}

/** --witness (the cluster) or --witness-file (an export); the cluster's flags only with --witness. */
function witnessOption(values: Values<typeof gradeFlags>): ClassOptions['witness'] {
  if (values.witness && values['witness-file'])
    throw new TermlabError(
      'USAGE',
      '--witness reads the records from the cluster, --witness-file from an export: give one of them',
    );
  if (!values.witness)
    for (const flag of ['context', 'kubeconfig', 'namespace'] as const)
      if (values[flag] !== undefined)
        throw new TermlabError('USAGE', `--${flag} names where the witness is: it goes with --witness`);
  if (values['witness-file']) return { file: values['witness-file'] };
  if (!values.witness) return undefined;
  return {
    kubeconfig: values.kubeconfig,
    context: values.context,
    classNamespace: values.namespace ?? 'termlab',
  };
}

// The command as the CLI shows and parses it is harness/cli/commands/grade.ts.
export const gradeCommand: CommandModule<typeof gradeFlags> = {
  async run(values, positionals, io) {
    if (!positionals.length) throw new TermlabError('USAGE', 'grade needs at least one observation file or directory');
    boundHeapGrowth();
    // A `termlab verify` file (*.verification.json), or the folder it wrote, has its own grader (harness/verify).
    const { withVerificationFolders } = await import('../verify/files.ts');
    const named = await withVerificationFolders(positionals);
    if (named.paths.every((p) => p.endsWith('.verification.json')))
      return (await import('../verify/command.ts')).gradeVerifications(named.paths, values, io, named.problems);
    const predictions = values.predictions ? await readPredictions(values.predictions) : undefined;
    const witness = witnessOption(values);
    if (witness && !values.gradebook && !values['gradebook-json'])
      throw new TermlabError(
        'USAGE',
        '--witness/--witness-file hold a class against the witness: name the gradebook with --gradebook FILE.csv or --gradebook-json FILE',
      );
    if (values.gradebook || values['gradebook-json'] || values.lab) {
      // A class is graded into a gradebook and a class report; a per-file output would be silently empty.
      for (const [flag, given] of [
        [`-o ${values.output}`, isData(values.output)],
        ['--junit', values.junit],
      ] as const) {
        if (given)
          throw new TermlabError(
            'USAGE',
            `${flag} cannot go with --gradebook/--gradebook-json/--lab: a class gives --gradebook-json (its rows as JSON) and --html/--md (the class report)`,
          );
      }
      if (!values.gradebook && !values['gradebook-json'] && !values.html && !values.md) {
        throw new TermlabError(
          'USAGE',
          '--lab grades a class: name where it goes with --gradebook FILE.csv, --gradebook-json FILE, --html FILE or --md FILE',
        );
      }
      return runClass(
        positionals,
        {
          gradebook: values.gradebook,
          gradebookJson: values['gradebook-json'],
          html: values.html,
          md: values.md,
          lab: values.lab,
          predictions,
          witness,
        },
        io,
      );
    }
    // Reports and JSON need every result whole; the terminal shows each as it comes and keeps little.
    const whole = Boolean(isData(values.output) || values.md || values.html || values.junit);
    const run = await gradeWithArchives(positionals, {
      predictions,
      signal: io.signal,
      slim: !whole,
      onResult: isData(values.output) ? undefined : (r) => io.out(formatResult(r)),
      onProblem: (p) => io.err(`termlab grade: ${t(p)}\n`),
    });
    await writeReports(run, values);
    if (isData(values.output))
      io.out(formatted({ results: run.results, pairs: run.pairs, problems: run.problems }, values.output));
    else {
      for (const pair of run.pairs)
        for (const c of pair.checks) io.out(`lab pair ${t(pair.pairId)}: ${c.status} — ${t(c.reason)}\n`);
      const { graded, passed, verdicts } = run.tally;
      // A named path that is missing or holds no observation file is said as such, never counted as a file unreadable.
      const unfound = run.unfound ?? [];
      const unreadable = run.problems.length - unfound.length;
      const said = unfound.map((u) => `${t(u.path)} ${u.why}`).join('; ');
      io.out(
        graded === 0 && unreadable === 0 && unfound.length
          ? `nothing graded: ${said}\n`
          : `${graded} graded, ${passed} passed every check, ${verdicts['evidence-invalid']} evidence invalid, ${verdicts.inconclusive} inconclusive, ${unreadable} unreadable${said ? `; ${said}` : ''}\n`,
      );
    }
    return exitCodeOf(run);
  },
};
