// Writing the reports of a graded set, shared by `termlab grade` and `termlab run`.
import { dirname, relative, resolve, sep } from 'node:path';
import { TermlabError } from '../../lib/errors.ts';
import { packagePath } from '../../lib/package-root.ts';
import type { GradeResult, PairResult } from '../grade/types.ts';
import { writeFileAtomic } from '../../lib/files.ts';
import { oneLine } from '../../lib/terminal.ts';
import { renderHiddenHtml, renderHiddenJunit, renderHiddenMarkdown } from './hidden.ts';
import { renderHtml } from './html.ts';
import { renderJunit } from './junit.ts';
import { renderMarkdown } from './markdown.ts';

/** termlab's docs folder as a link from a report written at `path`: relative, so a checkout's reports/ find it. */
const docsFrom = (path: string) =>
  relative(dirname(resolve(path)), packagePath('docs'))
    .split(sep)
    .join('/');

export interface ReportTargets {
  md?: string;
  html?: string;
  junit?: string;
}

/** Writes one output file atomically; a failure names the path and why, with its own exit code. */
export async function writeReport(path: string, text: string, what = 'the report'): Promise<void> {
  try {
    await writeFileAtomic(path, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'its folder does not exist'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : oneLine((error as Error).message);
    throw new TermlabError('OUTPUT_UNWRITABLE', `${path}: cannot write ${what}: ${why}`, { path }, { cause: error });
  }
}

/**
 * `hidden`: the run's answers are not to be shown yet (no predictions sealed, no --reveal): the reports hold
 * the setups and this line on how to see the rest (hidden.ts). `termlab grade` never hides.
 */
export async function writeReports(
  run: { results: GradeResult[]; pairs: PairResult[]; problems: string[] },
  targets: ReportTargets,
  hidden: string | null = null,
): Promise<void> {
  if (hidden !== null) {
    if (targets.md) await writeReport(targets.md, renderHiddenMarkdown(run.results, hidden));
    if (targets.html) await writeReport(targets.html, renderHiddenHtml(run.results, hidden));
    if (targets.junit) await writeReport(targets.junit, renderHiddenJunit(run.results, hidden));
    return;
  }
  if (targets.md) await writeReport(targets.md, renderMarkdown(run.results, run.pairs, run.problems));
  if (targets.html)
    await writeReport(targets.html, renderHtml(run.results, run.pairs, run.problems, docsFrom(targets.html)));
  if (targets.junit) await writeReport(targets.junit, renderJunit(run.results, run.pairs));
}
