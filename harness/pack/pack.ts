// `termlab pack`: one run directory -> one .tar.gz a student hands in. The files are copied to a
// staging directory first, so the archive holds exactly the bytes the manifest hashes.
import { existsSync, lstatSync } from 'node:fs';
import { copyFile, lstat, mkdtemp, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { create } from 'tar';
import { TermlabError } from '../errors.ts';
import { parsePredictions } from '../grade/predictions.ts';
import { readObservation } from '../observation-read.ts';
import { HARNESS_VERSION } from '../version.ts';
import { ARCHIVE_SUFFIX, MANIFEST_KIND, MANIFEST_NAME, MANIFEST_VERSION, MEMBER_NAME, PREDICTIONS_NAME, sha256, StudentSchema, type Manifest } from './manifest.ts';

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
  /** The student the predictions file names: the one a gradebook takes (see class/submission.ts `identify`). */
  predictedStudent: string | null;
}

async function regularFile(path: string): Promise<boolean> {
  try { return (await lstat(path)).isFile(); } catch { return false; }
}

export async function packRun(runDirArg: string, options: PackOptions = {}): Promise<PackResult> {
  let runDir: string;
  try { runDir = await realpath(runDirArg); } catch { throw new TermlabError('INPUT_UNREADABLE', `${runDirArg}: no such run directory`, { source: runDirArg }); }
  const names = (await readdir(runDir)).sort();
  const observations = names.filter((n) => n.endsWith(OBSERVATION_SUFFIX));
  if (!observations.length) throw new TermlabError('INPUT_UNREADABLE', `${runDirArg}: no *${OBSERVATION_SUFFIX} files in it: is it a run directory (reports/<run>)?`, { source: runDirArg });
  const members: { name: string; from: string }[] = [];
  const runIds = new Set<string>();
  for (const name of observations) {
    const from = join(runDir, name);
    if (!MEMBER_NAME.test(name) || !(await regularFile(from))) throw new TermlabError('INPUT_UNREADABLE', `${from}: not a plain file with a plain name; it cannot be packed`, { source: from });
    // Packing a file the grader cannot read helps nobody: say so now, on the student's machine.
    runIds.add((await readObservation(from)).run.runId);
    members.push({ name, from });
  }
  for (const name of REPORT_NAMES) if (await regularFile(join(runDir, name))) members.push({ name, from: join(runDir, name) });

  // Without --predictions: the run directory's, else the one `termlab predict` wrote here.
  const predictionsPath = options.predictions
    ?? [join(runDir, PREDICTIONS_NAME), resolve(PREDICTIONS_NAME)].find((p) => existsSync(p) && lstatSync(p).isFile());
  let student = options.student;
  let predictedStudent: string | null = null;
  if (predictionsPath) {
    let text: string;
    try { text = await readFile(predictionsPath, 'utf8'); } catch (error) { throw new TermlabError('INPUT_UNREADABLE', `${predictionsPath}: cannot read: ${(error as Error).message}`, { source: predictionsPath }); }
    predictedStudent = parsePredictions(text, predictionsPath).student?.trim() || null;
    student ??= predictedStudent ?? undefined;
    members.push({ name: PREDICTIONS_NAME, from: predictionsPath });
  }
  const checkedStudent = student === undefined ? null : StudentSchema.safeParse(student);
  if (checkedStudent && !checkedStudent.success) throw new TermlabError('USAGE', `--student: ${checkedStudent.error.issues[0]!.message}`);

  const staging = await mkdtemp(join(tmpdir(), 'termlab-pack-'));
  try {
    const files: Manifest['files'] = [];
    for (const { name, from } of members) {
      await copyFile(from, join(staging, name));
      const data = await readFile(join(staging, name));
      files.push({ path: name, sha256: sha256(data), bytes: data.length });
    }
    const manifest: Manifest = {
      kind: MANIFEST_KIND, version: MANIFEST_VERSION, harnessVersion: HARNESS_VERSION,
      student: checkedStudent?.data ?? null, createdAt: new Date().toISOString(), runIds: [...runIds].sort(), files,
    };
    await writeFile(join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + '\n');
    const archive = resolve(options.out ?? `${basename(runDir)}${ARCHIVE_SUFFIX}`);
    // Written beside its destination and renamed: a half-written archive is never handed in.
    const temporary = join(dirname(archive), `.${basename(archive)}.${process.pid}.tmp`);
    try {
      await create({ gzip: true, file: temporary, cwd: staging, portable: true, mtime: FIXED_MTIME, noDirRecurse: true }, [MANIFEST_NAME, ...files.map((f) => f.path)]);
      await rename(temporary, archive);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new TermlabError('INPUT_UNREADABLE', `${archive}: cannot write the archive: ${(error as Error).message}`, { source: archive });
    }
    return { archive, manifest, predictions: predictionsPath ?? null, predictedStudent };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
