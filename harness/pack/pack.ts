// `termlab pack`: one run directory -> one .tar.gz a student hands in. The files are copied to a
// staging directory first, so the archive holds exactly the bytes the manifest hashes.
import { existsSync, lstatSync } from 'node:fs';
import { copyFile, lstat, mkdtemp, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { create } from 'tar';
import { TermlabError } from '../../lib/errors.ts';
import { parsePredictions, predictionsSha256 } from '../grade/predictions.ts';
import type { SealedPredictions } from '../observation/schema.ts';
import { readObservation } from '../observation/read.ts';
import { wasInterrupted } from '../observation/incomplete.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import {
  INTERRUPTED_MARKER,
  ARCHIVE_SUFFIX,
  MANIFEST_KIND,
  MANIFEST_NAME,
  MANIFEST_VERSION,
  MEMBER_NAME,
  PREDICTIONS_NAME,
  sha256,
  StudentSchema,
  type Manifest,
} from './manifest.ts';

const OBSERVATION_SUFFIX = '.observation.json';
const REPORT_NAMES = ['report.md', 'report.html', 'junit.xml'];
/** Archive members carry this time, not the packing time, so the same run packs to the same bytes. */
const FIXED_MTIME = new Date('2000-01-01T00:00:00Z');

export interface PackOptions {
  out?: string;
  predictions?: string;
  student?: string;
}

export interface PackResult {
  archive: string;
  manifest: Manifest;
  predictions: string | null;
  /** sealed: the run's own predictions; unsealed: a file the run was not started with; none. */
  seal: 'sealed' | 'unsealed' | 'none';
  /** The student the packed predictions file names (sealed or not). */
  predictedStudent: string | null;
}

async function regularFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch {
    return false;
  }
}

/** The marker's own words ("interrupted (SIGTERM)"): the run wrote which signal stopped it. */
async function howInterrupted(marker: string): Promise<string> {
  const text = await readFile(marker, 'utf8').catch(() => '');
  return /\binterrupted \([^)\n]{1,40}\)/.exec(text)?.[0] ?? 'interrupted';
}

export async function packRun(runDirArg: string, options: PackOptions = {}): Promise<PackResult> {
  let runDir: string;
  try {
    runDir = await realpath(runDirArg);
  } catch {
    throw new TermlabError('INPUT_UNREADABLE', `${runDirArg}: no such run directory`, { source: runDirArg });
  }
  const names = (await readdir(runDir)).sort();
  const observations = names.filter((n) => n.endsWith(OBSERVATION_SUFFIX));
  if (!observations.length)
    throw new TermlabError(
      'INPUT_UNREADABLE',
      `${runDirArg}: no *${OBSERVATION_SUFFIX} files in it: is it a run directory (reports/<run>)?`,
      { source: runDirArg },
    );
  if (names.includes(INTERRUPTED_MARKER)) {
    throw new TermlabError(
      'INPUT_UNREADABLE',
      `${runDirArg}: this run was ${await howInterrupted(join(runDir, INTERRUPTED_MARKER))} before it finished (${INTERRUPTED_MARKER} in it): an interrupted run cannot be handed in; run the lab again to the end`,
      { source: runDirArg },
    );
  }
  const members: { name: string; from: string; text?: string }[] = [];
  const runIds = new Set<string>();
  const sealedBy = new Map<string, SealedPredictions>();
  let unsealed = 0;
  for (const name of observations) {
    const from = join(runDir, name);
    if (!MEMBER_NAME.test(name) || !(await regularFile(from)))
      throw new TermlabError('INPUT_UNREADABLE', `${from}: not a plain file with a plain name; it cannot be packed`, {
        source: from,
      });
    // Packing a file the grader cannot read helps nobody: say so now, on the student's machine.
    const observation = await readObservation(from);
    // An interrupted run is not a result: handing it in would grade the harness's own abort.
    if (wasInterrupted(observation.run)) {
      throw new TermlabError(
        'INPUT_UNREADABLE',
        `${from}: run ${observation.run.runId} was ${observation.run.incompleteReason}: an interrupted run cannot be handed in; run the lab again to the end`,
        { source: from },
      );
    }
    runIds.add(observation.run.runId);
    if (observation.run.predictions) sealedBy.set(observation.run.predictions.sha256, observation.run.predictions);
    else unsealed++;
    members.push({ name, from });
  }
  for (const name of REPORT_NAMES)
    if (await regularFile(join(runDir, name))) members.push({ name, from: join(runDir, name) });

  if (sealedBy.size > 1 || (sealedBy.size === 1 && unsealed > 0)) {
    throw new TermlabError(
      'PREDICTIONS_NOT_SEALED',
      `${runDirArg}: its observations were sealed with different predictions (${[...sealedBy.keys(), ...(unsealed ? ['none'] : [])].join(', ')}): pack the folder of one run`,
      { source: runDirArg },
    );
  }
  const sealed = sealedBy.size === 1 ? [...sealedBy.values()][0]! : null;
  let predictionsPath: string | undefined;
  let predictionsText: string | undefined;
  const readText = async (path: string) => {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      throw new TermlabError('INPUT_UNREADABLE', `${path}: cannot read: ${(error as Error).message}`, { source: path });
    }
  };
  // Only files the student named or the run wrote: a predictions.yaml that happens to lie in the
  // current directory belongs to no run in particular (another exercise, a classmate's), so it is never read.
  if (sealed) {
    // The run's own predictions, whatever lies about: a file written after the run is not them.
    if (options.predictions) {
      const offered = predictionsSha256(await readText(options.predictions));
      if (offered !== sealed.sha256) {
        throw new TermlabError(
          'PREDICTIONS_NOT_SEALED',
          `--predictions ${options.predictions} (sha256 ${offered}) is not the predictions file run ${[...runIds].join(', ')} sealed before its first pod (sha256 ${sealed.sha256}); leave --predictions out to pack the sealed one`,
          { source: options.predictions },
        );
      }
    }
    predictionsText = sealed.content;
    predictionsPath = join(runDir, PREDICTIONS_NAME);
  } else {
    // A run made without --predictions: the file packed (named, or left in the run directory) is flagged as not sealed.
    const inRun = join(runDir, PREDICTIONS_NAME);
    predictionsPath = options.predictions ?? (existsSync(inRun) && lstatSync(inRun).isFile() ? inRun : undefined);
    if (predictionsPath) predictionsText = await readText(predictionsPath);
  }
  // The manifest's student is who --student names, else who the sealed predictions name. An unsealed
  // file's name is not written there: the gradebook would show it as packed with --student, which it was not.
  let predictedStudent: string | null = null;
  if (predictionsText !== undefined) {
    predictedStudent = parsePredictions(predictionsText, predictionsPath!).student?.trim() || null;
    members.push({ name: PREDICTIONS_NAME, from: predictionsPath!, text: predictionsText });
  }
  const student = options.student ?? (sealed ? (predictedStudent ?? undefined) : undefined);
  const checkedStudent = student === undefined ? null : StudentSchema.safeParse(student);
  if (checkedStudent && !checkedStudent.success)
    throw new TermlabError('USAGE', `--student: ${checkedStudent.error.issues[0]!.message}`);

  const staging = await mkdtemp(join(tmpdir(), 'termlab-pack-'));
  try {
    const files: Manifest['files'] = [];
    for (const { name, from, text } of members) {
      if (text === undefined) await copyFile(from, join(staging, name));
      else await writeFile(join(staging, name), text);
      const data = await readFile(join(staging, name));
      files.push({ path: name, sha256: sha256(data), bytes: data.length });
    }
    const manifest: Manifest = {
      kind: MANIFEST_KIND,
      version: MANIFEST_VERSION,
      harnessVersion: HARNESS_VERSION,
      student: checkedStudent?.data ?? null,
      createdAt: new Date().toISOString(),
      runIds: [...runIds].sort(),
      files,
    };
    await writeFile(join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + '\n');
    const archive = resolve(options.out ?? `${basename(runDir)}${ARCHIVE_SUFFIX}`);
    // Written beside its destination and renamed: a half-written archive is never handed in.
    const temporary = join(dirname(archive), `.${basename(archive)}.${process.pid}.tmp`);
    try {
      await create(
        { gzip: true, file: temporary, cwd: staging, portable: true, mtime: FIXED_MTIME, noDirRecurse: true },
        [MANIFEST_NAME, ...files.map((f) => f.path)],
      );
      await rename(temporary, archive);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new TermlabError('INPUT_UNREADABLE', `${archive}: cannot write the archive: ${(error as Error).message}`, {
        source: archive,
      });
    }
    return {
      archive,
      manifest,
      predictions: predictionsPath ?? null,
      seal: sealed ? 'sealed' : predictionsPath ? 'unsealed' : 'none',
      predictedStudent,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
