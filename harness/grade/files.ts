// Finds observation files and grades them one at a time, so memory stays flat for a class's worth.
import { setFlagsFromString } from 'node:v8';
import { EXIT, isTermlabError, TermlabError } from '../../lib/errors.ts';
import {
  type AnyParsedObservation,
  parseAnyObservation,
  readAnyObservationFile,
  readAnyObservationFileNow,
} from '../observation/read.ts';
import { failedOrInconclusive, grade } from './grade.ts';
import { gradeRollout } from './rollout/grade.ts';
import { gradeEdge } from './edge/grade.ts';
import { gradePairs } from './pairs.ts';
import type { PredictionsFile } from './predictions.ts';
import { GradeTally } from './tally.ts';
import { walkPaths } from './walk.ts';
import type { GradeResult, PairResult } from './types.ts';

export const OBSERVATION_SUFFIX = '.observation.json';

/**
 * Grading many files keeps a small live heap (~26 MB at 100,000 files) but makes much short-lived garbage;
 * V8 then lets the heap grow up to 4x the live set between full collections when they are cheap (peak RSS
 * 230-260 MB at 100,000 files). At 1.5x, as here, the grader peaks near 150 MB for a few more ~5 ms
 * collections. V8 reads the factor at each collection, so setting it once the process runs takes effect.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=50');
}

/** Files named on the command line are taken as they are; directories give their *.observation.json (walk.ts). */
export const isObservationName = (name: string) => name.endsWith(OBSERVATION_SUFFIX);

export interface GradeRun {
  /** Every result, or with `slim` only the lab pairs' halves (the tally counts them all). */
  results: GradeResult[];
  pairs: PairResult[];
  /** One line per file that could not be read or parsed. */
  problems: string[];
  /** Every result counted as it was graded: the summary line and the exit code. */
  tally: GradeTally;
  /** The paths named that gave nothing to grade, and why (each is among `problems` too): not files that were unreadable. */
  unfound?: { path: string; why: string }[];
}

/** Why a named path gave nothing to grade, as the summary says it. */
export const UNFOUND = {
  missing: 'does not exist',
  empty: `has no observation files (*${OBSERVATION_SUFFIX}) in it`,
} as const;

export interface GradeFileOptions {
  /** Graded where the run sealed no predictions. */
  predictions?: PredictionsFile;
  /** Graded instead of any sealed ones: the file asked for by name. */
  predictionsOverride?: PredictionsFile;
  /** Ctrl-C: a read in progress stops. */
  signal?: AbortSignal;
  /** Each file as parsed, before it is graded: a class's witness check reads its claims (grade/witness.ts). */
  onObservation?: (source: string, parsed: AnyParsedObservation) => void;
}

/** The one grading path: `termlab grade` and `termlab run` both grade a file as read back from disk. */
export async function gradeFile(path: string, options: GradeFileOptions = {}): Promise<GradeResult> {
  return gradeRead(path, await readAnyObservationFile(path, options.signal), options);
}

function gradeRead(path: string, parsed: AnyParsedObservation, options: GradeFileOptions): GradeResult {
  options.onObservation?.(path, parsed);
  if (parsed.kind === 'rollout') return gradeRollout(parsed.observation, { source: path });
  if (parsed.kind === 'edge') return gradeEdge(parsed.observation, { source: path });
  return grade(parsed.observation, {
    source: path,
    predictions: options.predictions,
    predictionsOverride: options.predictionsOverride,
    fileVersion: parsed.fileVersion,
  });
}

/** The event loop gets a turn at least this often while files are read at once: Ctrl-C and the output are never held up. */
const TURN_EVERY_MS = 20;

/** A wait that lets the event loop in once TURN_EVERY_MS have passed since the last turn, else none. */
function turns(): () => Promise<void> | undefined {
  let turnAt = performance.now() + TURN_EVERY_MS;
  return () => {
    if (performance.now() < turnAt) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        turnAt = performance.now() + TURN_EVERY_MS;
        resolve();
      }),
    );
  };
}

type PendingRead = { path: string; parse: () => AnyParsedObservation };

/**
 * Each observation file under the paths, in the order of observationPaths, read when the grader reaches it
 * (at once: a small file's four trips through the thread pool cost more than grading it); a failure to list
 * a folder comes out where the walk met it.
 */
async function* readsInTurn(paths: string[], signal?: AbortSignal): AsyncGenerator<PendingRead> {
  const turn = turns();
  for await (const { path, problem } of walkPaths(paths, isObservationName)) {
    await turn();
    if (signal?.aborted) throw new TermlabError('INTERRUPTED', `${path}: interrupted while reading`, { source: path });
    // An entry that can never be read (a link loop, a folder) is one problem line of its own.
    const parse = problem
      ? () => {
          throw new TermlabError('INPUT_UNREADABLE', `${path}: ${problem}`, { source: path });
        }
      : () => readAnyObservationFileNow(path);
    yield { path, parse };
  }
}

/** 2 when some input could not be graded, 1 when a check failed or was inconclusive, else 0. */
export function exitCodeOf(run: Pick<GradeRun, 'pairs' | 'problems' | 'tally'>): number {
  if (run.problems.length) return EXIT.badInput;
  return run.tally.countedBad() || run.pairs.some(failedOrInconclusive) ? EXIT.checksFailed : EXIT.ok;
}

/**
 * What a grading keeps of a result once it is shown and tallied: with `slim`, only a lab pair's half (a
 * pair is formed at the end, and judged by its prediction: pairs.ts), without its timeline, passed checks,
 * notes and the model's steps; else the result whole.
 */
export function keptOf(r: GradeResult, slim: boolean | undefined): GradeResult | null {
  if (!slim) return r;
  if (!r.labPair) return null;
  return {
    ...r,
    checks: r.checks.filter((c) => c.status !== 'pass'),
    timeline: [],
    notes: [],
    prediction: r.prediction && { ...r.prediction, steps: [] },
  };
}

type GradeEachOptions = GradeFileOptions & {
  onResult?: (r: GradeResult) => void;
  onProblem?: (p: string) => void;
  slim?: boolean;
};
/** Grades each read as it comes; an unreadable file is a problem, the rest still graded. Returns how many there were. */
async function gradeEach(
  reads: AsyncIterable<PendingRead>,
  options: GradeEachOptions,
  results: GradeResult[],
  tally: GradeTally,
  noteProblem: (line: string) => void,
): Promise<number> {
  let found = 0;
  for await (const { path, parse } of reads) {
    found++;
    try {
      const result = gradeRead(path, parse(), options);
      options.onResult?.(result);
      tally.add(result);
      const kept = keptOf(result, options.slim);
      if (kept) results.push(kept);
    } catch (error) {
      if (!isTermlabError(error) || error.code === 'INTERRUPTED') throw error;
      noteProblem(error.message);
    }
  }
  return found;
}

function finishRun(results: GradeResult[], problems: string[], tally: GradeTally): GradeRun {
  // By every try tallied: a later try that was not kept (slim) still supersedes a kept one.
  tally.markSuperseded(results);
  return { results, pairs: gradePairs(results), problems, tally };
}

export async function gradePaths(paths: string[], options: GradeEachOptions = {}): Promise<GradeRun> {
  const results: GradeResult[] = [];
  const problems: string[] = [];
  const tally = new GradeTally();
  const unfound: { path: string; why: string }[] = [];
  const noteProblem = (line: string) => {
    problems.push(line);
    options.onProblem?.(line);
  };
  // A missing path is one problem; the other paths are still graded.
  for (const root of paths) {
    try {
      if ((await gradeEach(readsInTurn([root], options.signal), options, results, tally, noteProblem)) === 0) {
        noteProblem(`${root}: no *${OBSERVATION_SUFFIX} files in it`);
        unfound.push({ path: root, why: UNFOUND.empty });
      }
    } catch (error) {
      // Ctrl-C stops the whole grading (exit 130), never just this path.
      if (!isTermlabError(error) || error.code === 'INTERRUPTED') throw error;
      noteProblem(error.message);
      if (error.context.missing && error.context.source === root) unfound.push({ path: root, why: UNFOUND.missing });
    }
  }
  return { ...finishRun(results, problems, tally), unfound };
}

/**
 * An archive's observation members, graded from memory as gradePaths grades a folder's files (in name
 * order, each checked as a file is read), each named `ARCHIVE:MEMBER`.
 */
export async function gradeMembers(
  archive: string,
  members: ReadonlyMap<string, Buffer>,
  options: GradeEachOptions = {},
): Promise<GradeRun> {
  const results: GradeResult[] = [];
  const problems: string[] = [];
  const tally = new GradeTally();
  const noteProblem = (line: string) => {
    problems.push(line);
    options.onProblem?.(line);
  };
  const names = [...members.keys()].filter((n) => n.endsWith(OBSERVATION_SUFFIX)).sort((a, b) => a.localeCompare(b));
  // Each parsed as the loop reaches it: an archive's members are never all parsed at once.
  async function* reads(): AsyncGenerator<PendingRead> {
    const turn = turns();
    for (const name of names) {
      await turn();
      if (options.signal?.aborted)
        throw new TermlabError('INTERRUPTED', `${archive}: interrupted while grading`, { source: archive });
      const path = `${archive}:${name}`;
      yield { path, parse: () => parseAnyObservation(members.get(name)!, path) };
    }
  }
  if ((await gradeEach(reads(), options, results, tally, noteProblem)) === 0)
    noteProblem(`${archive}: no *${OBSERVATION_SUFFIX} files in it`);
  return finishRun(results, problems, tally);
}
