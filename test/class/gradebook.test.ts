import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import { EXIT } from '../../lib/errors.ts';
import { MANIFEST_NAME, ManifestSchema, sha256 } from '../../harness/pack/manifest.ts';
import { packRun } from '../../harness/pack/pack.ts';
import { openArchive } from '../../harness/pack/unpack.ts';
import { runCli } from '../support/cli.ts';
import { writeRunDir } from './fixtures.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig' };
let root: string;
let submissions: string;

/** Eve copies Ada's archive, renames the student everywhere and fixes the manifest's hashes to match. */
async function copyAsEve(adaArchive: string, to: string): Promise<void> {
  const opened = await openArchive(adaArchive);
  const staging = mkdtempSync(join(tmpdir(), 'termlab-copy-'));
  try {
    for (const [name, data] of opened.files) writeFileSync(join(staging, name), data);
    const predictions = opened.files.get('predictions.yaml')!.toString('utf8').replace('Ada Lovelace', 'Eve Copier');
    writeFileSync(join(staging, 'predictions.yaml'), predictions);
    const manifest = ManifestSchema.parse(JSON.parse(opened.files.get(MANIFEST_NAME)!.toString('utf8')));
    manifest.student = 'Eve Copier';
    manifest.files = manifest.files.map((f) =>
      f.path === 'predictions.yaml' ? { ...f, sha256: sha256(predictions), bytes: Buffer.byteLength(predictions) } : f,
    );
    writeFileSync(join(staging, MANIFEST_NAME), JSON.stringify(manifest));
    await create({ gzip: true, file: to, cwd: staging, portable: true }, [
      MANIFEST_NAME,
      ...manifest.files.map((f) => f.path),
    ]);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'termlab-class-'));
  submissions = join(root, 'submissions');
  mkdirSync(submissions);
  const work = join(root, 'work');
  await packRun(writeRunDir(work, { student: 'Ada Lovelace', tag: 'ada' }), { out: join(submissions, 'ada.tar.gz') });
  // Bob's short-grace run completed: his pair fails, on his own runs only.
  await packRun(writeRunDir(work, { student: 'Bob Byte', tag: 'bob', shortCompleted: true }), {
    out: join(submissions, 'bob.tar.gz'),
  });
  await copyAsEve(join(submissions, 'ada.tar.gz'), join(submissions, 'eve.tar.gz'));
});

describe.concurrent('termlab grade --gradebook', () => {
  it('gives one row per submission, each its own pair result, flags the copy, and exits for review', async () => {
    const csv = join(root, 'gradebook.csv');
    const json = join(root, 'gradebook.json');
    const r = await runCli(['grade', submissions, '--gradebook', csv, '--gradebook-json', json], offline);
    expect(r.code).toBe(EXIT.needsReview);
    const book = GradebookSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    const bySubmission = Object.fromEntries(book.rows.map((row) => [row.submission.split('/').pop(), row]));
    expect(book.rows).toHaveLength(3);
    expect(bySubmission['ada.tar.gz']).toMatchObject({
      student: 'Ada Lovelace',
      scenariosGraded: 2,
      matched: 2,
      pairs: { grace: 'pass' },
      predictionsRight: 2,
      predictionsTotal: 2,
      duplicateOf: [join(submissions, 'eve.tar.gz')],
    });
    expect(bySubmission['bob.tar.gz']).toMatchObject({
      student: 'Bob Byte',
      matched: 1,
      differed: 1,
      pairs: { grace: 'fail' },
      duplicateOf: [],
      review: [],
    });
    // Eve renamed the predictions and the pack, but the run sealed Ada's: the submission is Ada's, and every swap is named.
    expect(bySubmission['eve.tar.gz']).toMatchObject({
      student: 'Ada Lovelace',
      identity: 'predictions',
      evidenceInvalid: 0,
      pairs: { grace: 'pass' },
      duplicateOf: [join(submissions, 'ada.tar.gz')],
    });
    const eveReview = bySubmission['eve.tar.gz']!.review;
    expect(eveReview.slice(0, 3)).toEqual([
      `shares pod UIDs with ${join(submissions, 'ada.tar.gz')}`,
      `another submission names the same student "Ada Lovelace": ${join(submissions, 'ada.tar.gz')}`,
      'the sealed predictions name "Ada Lovelace" but the archive was packed for "Eve Copier" (--student); the predictions file names "Eve Copier" but the run did not seal it, so the submission is "Ada Lovelace" (the sealed predictions)',
    ]);
    expect(eveReview[3]).toMatch(
      new RegExp(
        `^attention: ${join(submissions, 'eve.tar.gz')}:predictions.yaml \\(sha256 [0-9a-f]{64}\\) is not the predictions file the run sealed \\(sha256 [0-9a-f]{64}\\): graded with the sealed ones$`,
      ),
    );

    const lines = readFileSync(csv, 'utf8').trim().split('\r\n');
    expect(lines[0]).toBe(
      'student,identity,submission,scenarios_graded,matched,differed,evidence_invalid,inconclusive,pair_grace,predictions_right,predictions_total,score,max_score,missing_scenarios,duplicate_of,problems,review',
    );
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.startsWith('Ada Lovelace,predictions,'))).toHaveLength(2);
    expect(r.stdout).toContain("3 submission(s) graded, 0 not graded; 2 need the instructor's eye");
  });

  it('grades a directory of archives without a gradebook too, each archive on its own', async () => {
    const r = await runCli(['grade', submissions], offline);
    expect(r.code).toBe(EXIT.checksFailed);
    expect(r.stdout.match(/lab pair grace: \w+/g)).toEqual([
      'lab pair grace: pass',
      'lab pair grace: fail',
      'lab pair grace: pass',
    ]);
    expect(r.stdout).toContain('6 graded');
  });

  it('exits 0 for a class with nothing to review, failing students included', async () => {
    const key = join(root, 'answer-key.yaml');
    writeFileSync(key, 'student: The Instructor\npredictions:\n  short-grace: { outcome: completed, exitCode: 0 }\n');
    const r = await runCli(
      [
        'grade',
        join(submissions, 'ada.tar.gz'),
        join(submissions, 'bob.tar.gz'),
        '--gradebook-json',
        join(root, 'clean.json'),
        '--predictions',
        key,
      ],
      offline,
    );
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain('2 submission(s) graded, 0 not graded; none needs review');
    // Graded against the instructor's file, still named by their own.
    const rows = GradebookSchema.parse(JSON.parse(readFileSync(join(root, 'clean.json'), 'utf8'))).rows;
    expect(rows.map((row) => [row.student, row.predictionsRight, row.predictionsTotal])).toEqual([
      ['Ada Lovelace', 0, 2],
      ['Bob Byte', 0, 2],
    ]);
  });

  it('scores with a lab file and lists missing required scenarios', async () => {
    const r = await runCli(
      ['grade', submissions, '--gradebook-json', join(root, 'lab.json'), '--lab', 'manifests/lab.yaml'],
      offline,
    );
    expect(r.code).toBe(EXIT.needsReview);
    const ada = GradebookSchema.parse(JSON.parse(readFileSync(join(root, 'lab.json'), 'utf8'))).rows.find(
      (row) => row.student === 'Ada Lovelace',
    )!;
    // Two of eight required scenarios, each 2 + 1 + 1 + 1 (its prediction agrees with the model), and the pair's 6.
    expect(ada).toMatchObject({ score: 2 * 5 + 6, maxScore: 8 * 5 + 6 });
    expect(ada.missingScenarios).toEqual([
      'hook-fits-grace',
      'immediate-exit',
      'no-prestop',
      'hook-outlasts-grace',
      'sleep-action',
      'httpget-hook',
    ]);
  });

  it('shows a score column in the class report only when a lab file scored it, and says so without one', async () => {
    const unscored = join(root, 'unscored.md');
    const scored = join(root, 'scored.md');
    await runCli(['grade', submissions, '--gradebook', join(root, 'u.csv'), '--md', unscored], offline);
    await runCli(
      ['grade', submissions, '--gradebook', join(root, 's.csv'), '--md', scored, '--lab', 'manifests/lab.yaml'],
      offline,
    );
    const header = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('| student'))!;
    expect(header(unscored)).not.toContain('score');
    expect(readFileSync(unscored, 'utf8')).toContain('Not scored: grade with `--lab FILE`');
    expect(header(scored)).toContain('| score |');
    expect(readFileSync(scored, 'utf8')).toMatch(/\| 16\/46 \|/);
  });

  it('refuses a bad lab file naming the file and the field', async () => {
    const bad = join(root, 'bad-lab.yaml');
    writeFileSync(bad, 'name: x\npoints: { outcome.request: -1 }\n');
    expect(
      await runCli(['grade', submissions, '--gradebook', join(root, 'x.csv'), '--lab', bad], offline),
    ).toMatchObject({ code: 2, stderr: expect.stringMatching(/bad-lab\.yaml: points\.outcome\.request: .*>=0/) });
    writeFileSync(bad, 'name: typo\npoints: { outcome.requests: 1 }\n');
    expect(
      (await runCli(['grade', submissions, '--gradebook', join(root, 'x.csv'), '--lab', bad], offline)).stderr,
    ).toContain("lab typo: points for check id outcome.requests, which no submission's grade has");
    writeFileSync(bad, 'name: x\nrequiredScenario: [a]\n');
    expect(
      (await runCli(['grade', submissions, '--gradebook', join(root, 'x.csv'), '--lab', bad], offline)).stderr,
    ).toMatch(/bad-lab\.yaml: .*requiredScenario/);
  });

  it('reports unreadable files per submission, goes on with the class, and escapes what students wrote', async () => {
    const klass = join(root, 'class-dirs');
    const work = join(root, 'work2');
    cpSync(writeRunDir(work, { student: '=HYPERLINK("http://x","click")', tag: 'mal' }), join(klass, 'mallory'), {
      recursive: true,
    });
    writeFileSync(join(klass, 'mallory', 'broken.observation.json'), '{"schemaVersion": 1,');
    cpSync(writeRunDir(work, { student: 'Term\u001b[2JInal', tag: 'ter' }), join(klass, 'terminal'), {
      recursive: true,
    });
    writeFileSync(join(klass, 'notes.txt'), 'not a submission, and not a directory: named as not graded');
    const csv = join(root, 'escaped.csv');
    const r = await runCli(['grade', klass, '--gradebook', csv], offline);
    expect(r.code).toBe(EXIT.needsReview);
    const text = readFileSync(csv, 'utf8');
    expect(text).toContain(`"'=HYPERLINK(""http://x"",""click"")",predictions,${join(klass, 'mallory')},2,2,`);
    expect(text).toMatch(/broken\.observation\.json: .*not JSON/);
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('Term\\u{1b}[2JInal');
    expect(r.stdout).toMatch(/terminal\): 2 graded, 2 matched/);
    expect(r.stdout).toContain(`⊘ ${join(klass, 'notes.txt')}: not graded — not a termlab hand-in`);
  });
});
