// One submission: an archive from `termlab pack` or a directory of observations. An archive's members
// are graded from memory as a folder's files are (gradeMembers beside gradePaths, one gradeRead);
// what the manifest does not vouch for is marked evidence invalid.
import type { Dirent, Stats } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isTermlabError } from '../../lib/errors.ts';
import { gradeMembers, gradePaths, type GradeRun, isObservationName, keptOf } from '../grade/files.ts';
import { walkPaths } from '../grade/walk.ts';
import { GradeTally } from '../grade/tally.ts';
import { retryReason } from '../grade/attempts.ts';
import { gradePairs } from '../grade/pairs.ts';
import { parsePredictions, predictionsSha256, type PredictionsFile } from '../grade/predictions.ts';
import type { GradeResult } from '../grade/types.ts';
import { claimsOf, type PodClaim } from '../grade/witness.ts';
import { fail } from '../grade/types.ts';
import { ARCHIVE_SUFFIX, INTERRUPTED_MARKER, MANIFEST_NAME, PREDICTIONS_NAME } from '../pack/manifest.ts';
import { archiveStem, isArchivePath, openArchive, type OpenedArchive } from '../pack/unpack.ts';

const MANIFEST_CHECK = 'submission.manifest';

export interface GradeOptions {
  /** Used for every submission; otherwise each submission's own predictions.yaml. */
  predictions?: PredictionsFile;
  onResult?: (r: GradeResult) => void;
  onProblem?: (p: string) => void;
  /** Ctrl-C stops a read that hangs. */
  signal?: AbortSignal;
  /** Keep only the lab pairs' halves, slimmed, once each result is shown and tallied (files.ts keptOf). */
  slim?: boolean;
}

export interface SubmissionGrade extends Omit<GradeRun, 'tally'> {
  /** The archive or directory as named on the command line. */
  path: string;
  /** The student, by the one identity rule (see `identify`). */
  student: string;
  hasPredictions: boolean;
  /** Where the identity came from, and a disagreement between the names a submission carries. */
  identity: Identity;
  /** Why evidence was distrusted, one line per graded file: counted as invalid, never as unreadable. */
  invalid: string[];
  /** What the instructor should look at that is no verdict: predictions not sealed, tries run again, a run interrupted. */
  attention: string[];
  /** What each graded file says of its pod, to hold against the class's witness. */
  claims: PodClaim[];
}

export interface Identity {
  source: 'predictions' | 'packed --student' | 'file name';
  /** Set when the names a submission carries disagree (sealed predictions, --student, a predictions file the run did not seal). */
  conflict?: string;
}

/**
 * One identity rule: the student the run's sealed predictions name, else the name packed with
 * `--student`, else the file name. Any disagreement among the names a submission carries is never silent.
 */
export function identify(
  sealed: string | null | undefined,
  packed: string | null | undefined,
  fileName: string,
  unsealed?: string | null,
): { student: string; identity: Identity } {
  const fromSealed = sealed?.trim() || undefined;
  const fromPack = packed?.trim() || undefined;
  const fromUnsealed = unsealed?.trim() || undefined;
  const chosen = fromSealed ?? fromPack ?? fileName;
  const conflicts = [
    fromSealed && fromPack && fromSealed !== fromPack
      ? `the sealed predictions name ${JSON.stringify(fromSealed)} but the archive was packed for ${JSON.stringify(fromPack)} (--student)`
      : null,
    fromUnsealed && fromUnsealed !== chosen
      ? `the predictions file names ${JSON.stringify(fromUnsealed)} but the run did not seal it, so the submission is ${JSON.stringify(chosen)} (${fromSealed ? 'the sealed predictions' : fromPack ? '--student' : 'its file name'})`
      : null,
  ].filter((c): c is string => c !== null);
  const conflict = conflicts.length ? conflicts.join('; ') : undefined;
  if (fromSealed) return { student: fromSealed, identity: { source: 'predictions', conflict } };
  if (fromPack) return { student: fromPack, identity: { source: 'packed --student', conflict } };
  return { student: fileName, identity: { source: 'file name', conflict } };
}

/** Predictions the run did not seal, tries run again and runs interrupted: each a line for the instructor. */
function attentionOf(results: GradeResult[], own: { sha256?: string; shownAs?: string }): string[] {
  const lines: string[] = [];
  const pod = results.filter((r) => r.prediction !== null);
  const sealed = new Set(pod.map((r) => r.sealedPredictions?.sha256).filter((h): h is string => typeof h === 'string'));
  const unsealed = pod.filter((r) => !r.sealedPredictions).length;
  if (unsealed)
    lines.push(
      `predictions not sealed by the run: ${unsealed} of ${pod.length} scenario(s) were run without --predictions`,
    );
  if (own.sha256 !== undefined && sealed.size === 1) {
    const [hash] = [...sealed];
    const offered = own.sha256;
    if (offered !== hash)
      lines.push(
        `${own.shownAs} (sha256 ${offered}) is not the predictions file the run sealed (sha256 ${hash}): graded with the sealed ones`,
      );
  }
  for (const r of results.filter((x) => x.supersededBy))
    lines.push(
      `retried: ${r.scenario} try ${r.attempt ?? 1} ${retryReason(r) ?? 'was run again'}; ${r.supersededBy} counts instead`,
    );
  for (const r of results) {
    const stopped = r.checks.find((c) => c.id === 'evidence.run-complete' && /interrupted/i.test(c.reason));
    if (stopped) lines.push(`interrupted: ${r.scenario}: ${stopped.reason}`);
  }
  return lines;
}

function distrust(result: GradeResult, why: string): GradeResult {
  return {
    ...result,
    verdict: 'evidence-invalid',
    explanation: why,
    checks: [...result.checks, fail(MANIFEST_CHECK, why)],
  };
}

async function ownPredictions(
  path: string,
  opened: OpenedArchive | null,
): Promise<{ file?: PredictionsFile; text?: string; shownAs?: string; problem?: string }> {
  const shownAs = opened ? `${path}:${PREDICTIONS_NAME}` : join(path, PREDICTIONS_NAME);
  let text: string;
  if (opened) {
    const data = opened.files.get(PREDICTIONS_NAME);
    if (!data) return {};
    text = data.toString('utf8');
  } else {
    try {
      text = await readFile(shownAs, 'utf8');
    } catch {
      return {};
    }
  }
  const why = opened?.untrusted.get(PREDICTIONS_NAME);
  if (why) return { problem: `${shownAs}: predictions not used: ${why}` };
  try {
    return { file: parsePredictions(text, shownAs, { writtenEarlier: true }), text, shownAs };
  } catch (error) {
    if (!isTermlabError(error)) throw error;
    return { problem: error.message };
  }
}

/** Grades one archive or directory; unreadable files are problems of this submission, never thrown. */
export async function gradeSubmission(path: string, options: GradeOptions = {}): Promise<SubmissionGrade> {
  const name = archiveStem(basename(path));
  let opened: OpenedArchive | null = null;
  try {
    if (isArchivePath(path)) opened = await openArchive(path, options.signal);
  } catch (error) {
    // Ctrl-C stops the whole grading (exit 130), never just this submission.
    if (!isTermlabError(error) || error.code === 'INTERRUPTED') throw error;
    options.onProblem?.(error.message);
    return {
      path,
      student: name,
      identity: { source: 'file name' },
      hasPredictions: false,
      results: [],
      pairs: [],
      problems: [error.message],
      invalid: [],
      attention: [],
      claims: [],
    };
  }
  const problems: string[] = [...(opened?.problems ?? [])];
  for (const p of problems) options.onProblem?.(p);
  const invalid: string[] = [];
  // The submission's own predictions name its student even when the instructor grades with others.
  const own = await ownPredictions(path, opened);
  if (own.problem) {
    problems.push(own.problem);
    options.onProblem?.(own.problem);
  }
  // The run's sealed predictions are graded, never a file swapped in beside them; an instructor's file by name overrides.
  const claims: PodClaim[] = [];
  const gradeOptions = {
    predictions: own.file,
    predictionsOverride: options.predictions,
    signal: options.signal,
    onObservation: (source: string, parsed: Parameters<typeof claimsOf>[0]) => claims.push(...claimsOf(parsed, source)),
  };
  const run = opened ? await gradeMembers(path, opened.files, gradeOptions) : await gradePaths([path], gradeOptions);
  const results = run.results.map((r) => {
    // An archive's results are named ARCHIVE:MEMBER (gradeMembers).
    const why = opened?.untrusted.get(r.source.slice(path.length + 1));
    if (!why) return r;
    invalid.push(`${r.source}: ${why}`);
    options.onProblem?.(`${r.source}: evidence invalid: ${why}`);
    return distrust(r, why);
  });
  for (const p of run.problems) {
    problems.push(p);
    options.onProblem?.(p);
  }
  for (const r of results) options.onResult?.(r);
  const sealedStudent = results.find((r) => r.sealedPredictions)?.sealedPredictions?.student;
  const ownSha = own.text === undefined ? undefined : predictionsSha256(own.text);
  const ownIsSealed = ownSha !== undefined && results.some((r) => r.sealedPredictions?.sha256 === ownSha);
  const { student, identity } = identify(
    sealedStudent,
    opened?.manifest?.student,
    name,
    ownIsSealed ? null : own.file?.student,
  );
  const hasPredictions =
    options.predictions !== undefined || own.file !== undefined || results.some((r) => r.sealedPredictions);
  return {
    path,
    student,
    identity,
    hasPredictions,
    results,
    pairs: gradePairs(results),
    problems,
    invalid,
    attention: attentionOf(results, { sha256: ownSha, shownAs: own.shownAs }),
    claims,
  };
}

/** `termlab grade PATH...` with archives among the paths: each archive graded as its own submission. */
export async function gradeWithArchives(paths: string[], options: GradeOptions = {}): Promise<GradeRun> {
  const plain: string[] = [];
  const archives: string[] = [];
  for (const path of paths) {
    if (isArchivePath(path)) {
      archives.push(path);
      continue;
    }
    // A directory of hand-ins: its archives are graded each on its own, its observations as ever.
    const found = await archivesUnder(path);
    archives.push(...found.archives);
    if (!found.archives.length || found.observations) plain.push(path);
  }
  const run: GradeRun = plain.length
    ? await gradePaths(plain, { ...options, predictions: undefined, predictionsOverride: options.predictions })
    : { results: [], pairs: [], problems: [], tally: new GradeTally() };
  for (const archive of archives) {
    const graded = await gradeSubmission(archive, options);
    // Each archive's tries counted within it, as its pairs were formed (gradeSubmission).
    run.tally.absorb(GradeTally.of(graded.results), archive);
    for (const r of graded.results) {
      const kept = keptOf(r, options.slim);
      if (kept) run.results.push(kept);
    }
    run.pairs.push(...graded.pairs);
    run.problems.push(...graded.problems);
  }
  // Each archive's pairs were formed within it: a copied archive shares its run id with the original.
  return run;
}

async function archivesUnder(path: string): Promise<{ archives: string[]; observations: boolean }> {
  const archives: string[] = [];
  let observations = false;
  // The grader's own walk (walk.ts), which ends on any tree of links; what it cannot read gradePaths names.
  const wanted = (name: string) => isArchivePath(name) || isObservationName(name);
  try {
    for await (const { path: found, problem } of walkPaths([path], wanted)) {
      if (!problem && isArchivePath(found)) archives.push(found);
      else observations = true;
    }
  } catch {
    return { archives: [], observations: false };
  }
  return { archives: archives.sort(), observations };
}

/** An entry of a submissions folder that is not graded, and why: every entry is one or the other. */
export interface Skipped {
  path: string;
  why: string;
}

export interface SubmissionList {
  submissions: string[];
  skipped: Skipped[];
  /** Paths named on the command line that do not exist or cannot be listed: bad input. */
  missing: string[];
}

/** What `termlab run` leaves in a run directory beside its observations. */
const isRunFile = (name: string) =>
  name.endsWith('.observation.json') ||
  name.endsWith('.observation.json.rejected') ||
  [MANIFEST_NAME, PREDICTIONS_NAME, INTERRUPTED_MARKER, 'report.html', 'report.md', 'junit.xml'].includes(name);

const NOT_A_HAND_IN = `not a termlab hand-in (hand in the ${ARCHIVE_SUFFIX} that \`termlab pack\` wrote)`;

/**
 * The submissions named on the command line: an archive is one; a directory that holds
 * observations or a manifest is one; any other directory holds one per archive or subdirectory,
 * and each of its other entries is named as skipped with why.
 */
export async function listSubmissions(paths: string[]): Promise<SubmissionList> {
  const list: SubmissionList = { submissions: [], skipped: [], missing: [] };
  for (const path of paths) {
    let info: Stats;
    try {
      info = await stat(path);
    } catch {
      list.missing.push(path);
      continue;
    }
    if (!info.isDirectory()) {
      if (isArchivePath(path)) list.submissions.push(path);
      else list.skipped.push({ path, why: NOT_A_HAND_IN });
      continue;
    }
    let entries: Dirent[];
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      list.missing.push(path);
      continue;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    if (entries.some((e) => e.isFile() && (e.name.endsWith('.observation.json') || e.name === MANIFEST_NAME))) {
      // A run directory: one submission with its subfolders; an archive in it is a hand-in of its
      // own, and anything else in it is named, never silently part of the grade.
      list.submissions.push(path);
      for (const e of entries) {
        const child = join(path, e.name);
        if (e.isFile() && isArchivePath(e.name)) list.submissions.push(child);
        else if (e.isSymbolicLink())
          list.skipped.push({ path: child, why: 'a symbolic link, not followed: hand in the archive itself' });
        else if (!e.isDirectory() && !(e.isFile() && isRunFile(e.name)))
          list.skipped.push({
            path: child,
            why: `not part of a run (${basename(path)} is graded as one run directory)`,
          });
      }
      continue;
    }
    for (const e of entries) {
      const child = join(path, e.name);
      if (e.isDirectory() || (e.isFile() && isArchivePath(e.name))) list.submissions.push(child);
      else if (e.isSymbolicLink())
        list.skipped.push({ path: child, why: 'a symbolic link, not followed: hand in the archive itself' });
      else list.skipped.push({ path: child, why: e.isFile() ? NOT_A_HAND_IN : 'not a file or a directory' });
    }
  }
  return list;
}
