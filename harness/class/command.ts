// `termlab grade SUBMISSIONS... --gradebook FILE.csv [--gradebook-json FILE] [--lab FILE]`:
// each submission graded on its own, one row each, and an exit code that says whether the
// instructor needs to look (copies, invalid evidence, unreadable files).
import type { CommandIO } from '../command.ts';
import { EXIT, unwritable } from '../errors.ts';
import type { PredictionsFile } from '../grade/predictions.ts';
import { writeFileAtomic } from '../observation.ts';
import { terminalText } from './escape.ts';
import { finishGradebook, gradebookCsv, needsReview, partialRow, unusedPointIds, type Gradebook, type PartialRow } from './gradebook.ts';
import { readLab, type Lab } from './lab.ts';
import { gradeSubmission, listSubmissions } from './submission.ts';

const SUBMISSIONS_AT_ONCE = 4;

export interface ClassOptions {
  gradebook?: string;
  gradebookJson?: string;
  lab?: string;
  predictions?: PredictionsFile;
}

export async function gradeClass(paths: string[], lab: Lab | null, options: { predictions?: PredictionsFile; onProblem?: (p: string) => void; signal?: AbortSignal } = {}): Promise<Gradebook> {
  const { submissions, problems } = await listSubmissions(paths);
  for (const p of problems) options.onProblem?.(p.problem);
  // A few submissions at once, so one's file reads overlap another's grading; only each row is
  // kept, so a class's results are never all in memory at once.
  const partials: PartialRow[] = new Array(submissions.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(SUBMISSIONS_AT_ONCE, submissions.length) }, async () => {
    while (next < submissions.length) {
      const index = next++;
      partials[index] = partialRow(await gradeSubmission(submissions[index]!, { predictions: options.predictions, signal: options.signal }), lab);
    }
  }));
  const book = finishGradebook(partials, lab);
  if (lab && partials.length) for (const id of unusedPointIds(partials, lab)) options.onProblem?.(`lab ${lab.name}: points for check id ${id}, which no submission's grade has (a typo?)`);
  // A path that is no submission still gets a row, so the instructor sees it in the gradebook.
  book.rows.push(...problems.map(({ path, problem }) => ({
    student: '', submission: path, scenariosGraded: 0, matched: 0, differed: 0, evidenceInvalid: 0, inconclusive: 0,
    pairs: Object.fromEntries(book.pairIds.map((id) => [id, 'missing' as const])), predictionsRight: null, predictionsTotal: null,
    missingScenarios: lab?.requiredScenarios ?? [], score: lab ? 0 : null, maxScore: null, duplicateOf: [], problems: [problem], review: ['not a submission'],
  })));
  return book;
}

function summaryLine(row: Gradebook['rows'][number], pairIds: string[]): string {
  const pairs = pairIds.map((id) => `${id}:${row.pairs[id]}`).join(' ');
  const predictions = row.predictionsTotal === null ? 'no predictions' : `predictions ${row.predictionsRight}/${row.predictionsTotal}`;
  const score = row.score === null ? '' : `  score ${row.score}/${row.maxScore}`;
  return `${terminalText(row.student)}  (${terminalText(row.submission)}): ${row.scenariosGraded} graded, ${row.matched} matched, ${row.differed} differed, ${row.evidenceInvalid} invalid, ${row.inconclusive} inconclusive; pairs ${pairs || 'none'}; ${predictions}${score}\n`
    + row.review.map((why) => `    ⚠ ${terminalText(why)}\n`).join('');
}

export async function runClass(paths: string[], options: ClassOptions, io: CommandIO): Promise<number> {
  const lab = options.lab ? await readLab(options.lab) : null;
  const book = await gradeClass(paths, lab, { predictions: options.predictions, signal: io.signal, onProblem: (p) => io.err(`termlab grade: ${terminalText(p)}\n`) });
  const write = async (path: string, text: string, what: string) => {
    try { await writeFileAtomic(path, text); } catch (error) { throw unwritable('OUTPUT_UNWRITABLE', what, path, error); }
  };
  if (options.gradebook) await write(options.gradebook, gradebookCsv(book), '--gradebook');
  if (options.gradebookJson) await write(options.gradebookJson, JSON.stringify(book, null, 2) + '\n', '--gradebook-json');
  for (const row of book.rows) io.out(summaryLine(row, book.pairIds));
  const flagged = book.rows.filter((r) => r.review.length).length;
  io.out(`${book.rows.length} submission(s); ${flagged ? `${flagged} need the instructor's eye (see the review column)` : 'none needs review'}\n`);
  return needsReview(book) ? EXIT.needsReview : EXIT.ok;
}
