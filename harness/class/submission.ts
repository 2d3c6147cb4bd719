// One submission: an archive from `termlab pack` or a directory of observations. Archives are
// extracted to a temporary directory and graded there by the one grading path (gradePaths);
// what the manifest does not vouch for is marked evidence invalid.
import type { Stats } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { isTermlabError } from '../errors.ts';
import { gradePaths, type GradeRun } from '../grade/files.ts';
import { gradePairs } from '../grade/pairs.ts';
import { parsePredictions, type PredictionsFile } from '../grade/predictions.ts';
import type { GradeResult } from '../grade/types.ts';
import { fail } from '../grade/types.ts';
import { ARCHIVE_SUFFIX, MANIFEST_NAME, PREDICTIONS_NAME } from '../pack/manifest.ts';
import { isArchivePath, openArchive, type OpenedArchive } from '../pack/unpack.ts';

export const MANIFEST_CHECK = 'submission.manifest';

export interface GradeOptions {
  /** Used for every submission; otherwise each submission's own predictions.yaml. */
  predictions?: PredictionsFile;
  onResult?: (r: GradeResult) => void;
  onProblem?: (p: string) => void;
  /** Ctrl-C stops a read that hangs. */
  signal?: AbortSignal;
}

export interface SubmissionGrade extends GradeRun {
  /** The archive or directory as named on the command line. */
  path: string;
  /** The student: the predictions file's, else the manifest's, else the archive or directory name. */
  student: string;
  hasPredictions: boolean;
}

/** Results and problems name `archive.tar.gz:member`, never the temporary directory. */
function relabel(text: string, opened: OpenedArchive): string {
  return text.split(opened.dir + sep).join(`${opened.archive}:`).split(opened.dir).join(opened.archive);
}

function distrust(result: GradeResult, why: string): GradeResult {
  return { ...result, verdict: 'evidence-invalid', explanation: why, checks: [...result.checks, fail(MANIFEST_CHECK, why)] };
}

async function ownPredictions(path: string, opened: OpenedArchive | null): Promise<{ file?: PredictionsFile; problem?: string }> {
  const shownAs = opened ? `${path}:${PREDICTIONS_NAME}` : join(path, PREDICTIONS_NAME);
  let text: string;
  if (opened) {
    const data = opened.files.get(PREDICTIONS_NAME);
    if (!data) return {};
    text = data.toString('utf8');
  } else {
    try { text = await readFile(shownAs, 'utf8'); } catch { return {}; }
  }
  const why = opened?.untrusted.get(PREDICTIONS_NAME);
  if (why) return { problem: `${shownAs}: predictions not used: ${why}` };
  try { return { file: parsePredictions(text, shownAs) }; } catch (error) {
    if (!isTermlabError(error)) throw error;
    return { problem: error.message };
  }
}

/** Grades one archive or directory; unreadable files are problems of this submission, never thrown. */
export async function gradeSubmission(path: string, options: GradeOptions = {}): Promise<SubmissionGrade> {
  const name = basename(path).replace(/\.(tar\.gz|tgz)$/, '');
  let opened: OpenedArchive | null = null;
  try {
    if (isArchivePath(path)) opened = await openArchive(path, options.signal);
  } catch (error) {
    if (!isTermlabError(error)) throw error;
    options.onProblem?.(error.message);
    return { path, student: name, hasPredictions: false, results: [], pairs: [], problems: [error.message] };
  }
  try {
    const dir = opened?.dir ?? path;
    const problems: string[] = [...(opened?.problems ?? [])];
    for (const p of problems) options.onProblem?.(p);
    // The submission's own predictions name its student even when the instructor grades with others.
    const own = await ownPredictions(path, opened);
    if (own.problem) { problems.push(own.problem); options.onProblem?.(own.problem); }
    const predictions = options.predictions ?? own.file;
    const run = await gradePaths([dir], { predictions });
    const results = run.results.map((r) => {
      if (!opened) return r;
      const shown = { ...r, source: relabel(r.source, opened) };
      const why = opened.untrusted.get(basename(r.source));
      return why ? distrust(shown, why) : shown;
    });
    for (const p of run.problems) { const line = opened ? relabel(p, opened) : p; problems.push(line); options.onProblem?.(line); }
    for (const r of results) options.onResult?.(r);
    const student = own.file?.student?.trim() || opened?.manifest?.student || name;
    return { path, student, hasPredictions: predictions !== undefined, results, pairs: gradePairs(results), problems };
  } finally {
    await opened?.close();
  }
}

/** `termlab grade PATH...` with archives among the paths: each archive graded as its own submission. */
export async function gradeWithArchives(paths: string[], options: GradeOptions = {}): Promise<GradeRun> {
  const plain: string[] = [];
  const archives: string[] = [];
  for (const path of paths) {
    if (isArchivePath(path)) { archives.push(path); continue; }
    // A directory of hand-ins: its archives are graded each on its own, its observations as ever.
    const found = await archivesUnder(path);
    archives.push(...found.archives);
    if (!found.archives.length || found.observations) plain.push(path);
  }
  const run: GradeRun = plain.length ? await gradePaths(plain, options) : { results: [], pairs: [], problems: [] };
  for (const archive of archives) {
    const graded = await gradeSubmission(archive, options);
    run.results.push(...graded.results);
    run.pairs.push(...graded.pairs);
    run.problems.push(...graded.problems);
  }
  // Each archive's pairs were formed within it: a copied archive shares its run id with the original.
  return run;
}

async function archivesUnder(path: string): Promise<{ archives: string[]; observations: boolean }> {
  let names: string[];
  try { names = await readdir(path, { recursive: true }); } catch { return { archives: [], observations: false }; }
  return { archives: names.filter(isArchivePath).sort().map((n) => join(path, n)), observations: names.some((n) => n.endsWith('.observation.json')) };
}

/**
 * The submissions named on the command line: an archive is one; a directory that holds
 * observations or a manifest is one; any other directory holds one per archive or subdirectory.
 */
export async function listSubmissions(paths: string[]): Promise<{ submissions: string[]; problems: { path: string; problem: string }[] }> {
  const submissions: string[] = [];
  const problems: { path: string; problem: string }[] = [];
  for (const path of paths) {
    let info: Stats;
    try { info = await stat(path); } catch { problems.push({ path, problem: `${path}: no such file or directory` }); continue; }
    if (!info.isDirectory()) {
      if (isArchivePath(path)) submissions.push(path);
      else problems.push({ path, problem: `${path}: not a submission (a *${ARCHIVE_SUFFIX} archive or a directory)` });
      continue;
    }
    const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    if (entries.some((e) => e.isFile() && (e.name.endsWith('.observation.json') || e.name === MANIFEST_NAME))) { submissions.push(path); continue; }
    for (const e of entries) {
      if (e.isDirectory() || (e.isFile() && isArchivePath(e.name))) submissions.push(join(path, e.name));
    }
  }
  return { submissions, problems };
}
