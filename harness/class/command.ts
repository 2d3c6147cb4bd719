// `termlab grade SUBMISSIONS... --gradebook FILE.csv [--gradebook-json FILE] [--html FILE] [--md FILE] [--lab FILE]`:
// each submission graded on its own, one row each, and an exit code that says whether the
// instructor needs to look (copies, invalid evidence, unreadable files, a name that disagrees).
import type { CommandIO } from '../../lib/command.ts';
import { EXIT, TermlabError } from '../../lib/errors.ts';
import type { PredictionsFile } from '../grade/predictions.ts';
import { resultCards } from '../report/html.ts';
import { writeReport } from '../report/write.ts';
import { escapeTerminal as terminalText } from '../../lib/terminal.ts';
import {
  finishGradebook,
  gradebookCsv,
  type WitnessRecords,
  needsReview,
  partialRow,
  unusedPointIds,
  type Gradebook,
  type PartialRow,
} from './gradebook.ts';
import { readLab, type Lab } from './lab.ts';
import { renderClassHtml, renderClassMarkdown } from './report.ts';
import { gradeSubmission, listSubmissions } from './submission.ts';
import type { WitnessSource } from './witness-cluster.ts';
import { readWitnessExport, type WitnessExport } from '../observation/witness.ts';

/** The witness's records, by pod UID, from the file or (the instructor's kubeconfig) the cluster. */
async function loadWitness(source: NonNullable<ClassOptions['witness']>): Promise<WitnessRecords> {
  let book: WitnessExport;
  let from: string;
  if ('file' in source) {
    book = await readWitnessExport(source.file);
    from = `${source.file} (exported from ${book.cluster.context} at ${book.exportedAt})`;
  } else {
    // The Kubernetes client is loaded only here, and only for --witness.
    book = await (await import('./witness-cluster.ts')).readWitnessFromCluster(source);
    from = `${book.namespace} on ${book.cluster.context} (read ${book.exportedAt})`;
  }
  return { source: from, byUid: new Map(book.records.map((r) => [r.uid, r])) };
}

const SUBMISSIONS_AT_ONCE = 4;

export interface ClassOptions {
  gradebook?: string;
  gradebookJson?: string;
  html?: string;
  md?: string;
  lab?: string;
  predictions?: PredictionsFile;
  /** Hold each hand-in against the class's witness: its records from an export file, or read from the cluster. */
  witness?: { file: string } | WitnessSource;
}

export interface ClassGrade {
  book: Gradebook;
  /** Paths named on the command line that do not exist. */
  missing: string[];
  /** Each submission's timelines and checks, rendered, when a class HTML report is wanted. */
  sections: Map<string, string>;
}

export async function gradeClass(
  paths: string[],
  lab: Lab | null,
  options: {
    predictions?: PredictionsFile;
    onProblem?: (p: string) => void;
    signal?: AbortSignal;
    renderSections?: boolean;
    witness?: WitnessRecords | null;
  } = {},
): Promise<ClassGrade> {
  const { submissions, skipped, missing } = await listSubmissions(paths);
  // A few submissions at once, so one's file reads overlap another's grading; only each row (and,
  // for the HTML report, its rendered section) is kept, never a class's results all at once.
  const partials: PartialRow[] = new Array(submissions.length);
  const sections = new Map<string, string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(SUBMISSIONS_AT_ONCE, submissions.length) }, async () => {
      while (next < submissions.length) {
        const index = next++;
        const graded = await gradeSubmission(submissions[index]!, {
          predictions: options.predictions,
          signal: options.signal,
        });
        if (options.renderSections && graded.results.length)
          sections.set(graded.path, resultCards(graded.results, `g${index}-`));
        partials[index] = partialRow(graded, lab, options.witness ?? null);
      }
    }),
  );
  const book = finishGradebook(partials, lab, skipped, options.witness ?? null);
  if (lab && partials.length)
    for (const id of unusedPointIds(partials, lab))
      options.onProblem?.(`lab ${lab.name}: points for check id ${id}, which no submission's grade has (a typo?)`);
  return { book, missing, sections };
}

function summaryLine(row: Gradebook['rows'][number], pairIds: string[]): string {
  const vouched = row.vouched === undefined ? '' : `; vouched ${row.vouched}`;
  const pairs = pairIds.map((id) => `${id}:${row.pairs[id]}`).join(' ');
  const predictions =
    row.predictionsTotal === null ? 'no predictions' : `predictions ${row.predictionsRight}/${row.predictionsTotal}`;
  const score = row.score === null ? '' : `  score ${row.score}/${row.maxScore}`;
  return (
    `${terminalText(row.student)}  (${terminalText(row.submission)}): ${row.scenariosGraded} graded, ${row.matched} matched, ${row.differed} differed, ${row.evidenceInvalid} invalid, ${row.inconclusive} inconclusive; pairs ${pairs || 'none'}; ${predictions}${score}${terminalText(vouched)}\n` +
    row.review.map((why) => `    ⚠ ${terminalText(why)}\n`).join('')
  );
}

export async function runClass(paths: string[], options: ClassOptions, io: CommandIO): Promise<number> {
  const lab = options.lab ? await readLab(options.lab) : null;
  // Read before any grading: a witness that cannot be read stops the class, never grades it half-vouched.
  const witness = options.witness ? await loadWitness(options.witness) : null;
  if (witness) io.out(`witness: ${witness.byUid.size} pod record(s) from ${terminalText(witness.source)}\n`);
  const { book, missing, sections } = await gradeClass(paths, lab, {
    witness,
    predictions: options.predictions,
    signal: io.signal,
    renderSections: options.html !== undefined,
    onProblem: (p) => io.err(`termlab grade: ${terminalText(p)}\n`),
  });
  // Nothing gradable is bad input, said before anything is written.
  if (!book.rows.length) {
    const why = missing.length
      ? `${missing.join(', ')}: no such file or directory`
      : `no submissions in ${paths.join(', ')} (archives from \`termlab pack\`, or run directories)`;
    for (const s of book.skipped)
      io.err(`termlab grade: ${terminalText(s.path)}: not graded — ${terminalText(s.why)}\n`);
    throw new TermlabError('INPUT_UNREADABLE', `nothing to grade: ${why}`, { paths });
  }
  if (options.gradebook) await writeReport(options.gradebook, gradebookCsv(book), 'the gradebook');
  if (options.gradebookJson)
    await writeReport(options.gradebookJson, JSON.stringify(book, null, 2) + '\n', 'the gradebook');
  if (options.html) await writeReport(options.html, renderClassHtml(book, sections), 'the class report');
  if (options.md) await writeReport(options.md, renderClassMarkdown(book), 'the class report');
  for (const row of book.rows) io.out(summaryLine(row, book.pairIds));
  for (const s of book.skipped) io.out(`⊘ ${terminalText(s.path)}: not graded — ${terminalText(s.why)}\n`);
  const flagged = book.rows.filter((r) => r.review.length).length;
  io.out(
    `${book.rows.length} submission(s) graded, ${book.skipped.length} not graded; ${flagged ? `${flagged} need the instructor's eye (⚠ above, and the review column)` : 'none needs review'}\n`,
  );
  if (missing.length) {
    io.err(
      `termlab grade: ${missing.map((m) => terminalText(m)).join(', ')}: no such file or directory (the rest was graded)\n`,
    );
    return EXIT.badInput;
  }
  return needsReview(book) ? EXIT.needsReview : EXIT.ok;
}
