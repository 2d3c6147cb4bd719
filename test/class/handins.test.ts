// A class's hand-ins as they really arrive: re-wrapped archives, stray files, one student twice, a
// name that disagrees. Every entry is graded or named with why; nothing is dropped silently.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { create } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import { EXIT } from '../../lib/errors.ts';
import { packRun } from '../../harness/pack/pack.ts';
import { openArchive } from '../../harness/pack/unpack.ts';
import { runCli } from '../support/cli.ts';
import { writeRunDir } from './fixtures.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig' };
let root: string;
let work: string;
let klass: string;

/** The packed run's members, re-written as a plain (uncompressed) tar, as `tar cf` on the files would. */
async function asPlainTar(archive: string, to: string): Promise<void> {
  const opened = await openArchive(archive);
  const staging = mkdtempSync(join(tmpdir(), 'termlab-retar-'));
  try {
    for (const [name, data] of opened.files) writeFileSync(join(staging, name), data);
    await create({ file: to, cwd: staging, portable: true }, [...opened.files.keys()]);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'termlab-handins-'));
  work = join(root, 'work');
  klass = join(root, 'class');
  mkdirSync(klass);
  await packRun(writeRunDir(work, { student: 'Grace Hopper', tag: 'grace' }), { out: join(klass, 'grace.tar.gz') });
  // Ada zipped her .tar.gz (the course site wanted a .zip), and also handed in a plain .tar of another run.
  const ada = join(root, 'ada-packed.tar.gz');
  await packRun(writeRunDir(work, { student: 'Ada Lovelace', tag: 'ada' }), { out: ada });
  writeFileSync(
    join(klass, 'ada.zip'),
    zipSync({ 'ada.tar.gz': readFileSync(ada), '__MACOSX/._ada.tar.gz': strToU8('fork') }),
  );
  const ada2 = join(root, 'ada2-packed.tar.gz');
  await packRun(writeRunDir(work, { student: 'Ada Lovelace', tag: 'ada2' }), { out: ada2 });
  await asPlainTar(ada2, join(klass, 'ada.tar'));
  // A zip of something else entirely, and a stray file.
  writeFileSync(join(klass, 'holiday.zip'), zipSync({ 'photo.jpg': strToU8('jpeg') }));
  writeFileSync(join(klass, 'README.txt'), 'grading notes');
});

describe.concurrent('every hand-in accounted for', () => {
  it('grades .tar.gz, a .zip holding the pack, and a plain .tar; names what it did not grade; flags one student twice', async () => {
    const json = join(root, 'book.json');
    const r = await runCli(['grade', klass, '--gradebook-json', json], offline);
    expect(r.code).toBe(EXIT.needsReview);
    const book = GradebookSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    const row = (file: string) => book.rows.find((x) => x.submission === join(klass, file))!;
    expect(book.rows.map((x) => x.submission.split('/').pop())).toEqual([
      'ada.tar',
      'ada.zip',
      'grace.tar.gz',
      'holiday.zip',
    ]);
    for (const file of ['ada.tar', 'ada.zip', 'grace.tar.gz'])
      expect(row(file)).toMatchObject({ scenariosGraded: 2, matched: 2, evidenceInvalid: 0, pairs: { grace: 'pass' } });
    expect(row('ada.zip').review).toEqual([
      `another submission names the same student "Ada Lovelace": ${join(klass, 'ada.tar')}`,
    ]);
    expect(row('ada.tar').review).toEqual([
      `another submission names the same student "Ada Lovelace": ${join(klass, 'ada.zip')}`,
    ]);
    expect(row('grace.tar.gz').review).toEqual([]);
    expect(row('holiday.zip')).toMatchObject({ scenariosGraded: 0, student: 'holiday' });
    expect(row('holiday.zip').review.join()).toContain(
      'not a termlab archive (no manifest.json, no observations) — hand in the .tar.gz that `termlab pack` wrote',
    );
    expect(book.skipped).toEqual([
      { path: join(klass, 'README.txt'), why: 'not a termlab hand-in (hand in the .tar.gz that `termlab pack` wrote)' },
    ]);
    // The terminal names each problem with its submission, and what was not graded.
    expect(r.stdout).toContain(`⊘ ${join(klass, 'README.txt')}: not graded`);
    expect(r.stdout).toMatch(
      /holiday {2}\(.*holiday\.zip\): 0 graded[^\n]*\n {4}⚠ file problem: .*holiday\.zip: not a termlab archive/,
    );
    expect(r.stdout).toContain("4 submission(s) graded, 1 not graded; 3 need the instructor's eye");
  });

  it('exits 2 with a clear line for an empty folder, a folder of unrelated files, and a missing path', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const r1 = await runCli(['grade', empty, '--gradebook', join(root, 'e.csv')], offline);
    expect(r1).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining(`nothing to grade: no submissions in ${empty}`),
    });
    const unrelated = join(root, 'unrelated');
    mkdirSync(unrelated);
    writeFileSync(join(unrelated, 'data.json'), '{"a": 1}');
    const r2 = await runCli(['grade', unrelated, '--gradebook', join(root, 'u.csv')], offline);
    expect(r2.code).toBe(EXIT.badInput);
    expect(r2.stderr).toContain(`${join(unrelated, 'data.json')}: not graded — not a termlab hand-in`);
    // A missing path beside a real one: the real one is graded and written, and the exit says input was bad.
    const csv = join(root, 'm.csv');
    const r3 = await runCli(['grade', join(klass, 'grace.tar.gz'), join(root, 'no-such'), '--gradebook', csv], offline);
    expect(r3.code).toBe(EXIT.badInput);
    expect(r3.stderr).toContain(`${join(root, 'no-such')}: no such file or directory (the rest was graded)`);
    expect(readFileSync(csv, 'utf8')).toContain('Grace Hopper,predictions,');
    expect(readFileSync(csv, 'utf8')).not.toContain('no-such');
  });

  it('says at pack time, and flags in the gradebook, a --student that disagrees with the predictions', async () => {
    const run = writeRunDir(work, { student: 'Ada Lovelace', tag: 'charlie' });
    const archive = join(root, 'charlie.tar.gz');
    const packed = await runCli(['pack', run, '--output-file', archive, '--student', 'Charlie Copy'], offline);
    expect(packed.code).toBe(EXIT.ok);
    expect(packed.stdout).toContain('for Ada Lovelace');
    expect(packed.stderr).toContain('--student "Charlie Copy" differs from the student "Ada Lovelace"');
    const json = join(root, 'charlie.json');
    const r = await runCli(['grade', archive, '--gradebook-json', json], offline);
    expect(r.code).toBe(EXIT.needsReview);
    const [row] = GradebookSchema.parse(JSON.parse(readFileSync(json, 'utf8'))).rows;
    expect(row).toMatchObject({ student: 'Ada Lovelace', identity: 'predictions' });
    expect(row!.review).toEqual([
      'the sealed predictions name "Ada Lovelace" but the archive was packed for "Charlie Copy" (--student)',
    ]);
  });

  it('writes a class report with --html and --md, and refuses per-file outputs beside a gradebook', async () => {
    const html = join(root, 'class.html');
    const md = join(root, 'class.md');
    const r = await runCli(['grade', klass, '--gradebook', join(root, 'c.csv'), '--html', html, '--md', md], offline);
    expect(r.code).toBe(EXIT.needsReview);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<table class="class">');
    expect(page.match(/<section class="student"/g)).toHaveLength(4);
    expect(page).toContain('<h2>Grace Hopper</h2>');
    expect(page).toMatch(/<section class="card v-matches-model" id="g\d-\d-short-grace">/);
    expect(page).toContain('aria-label="timeline of short-grace"');
    expect(page).toContain('README.txt</code>: not a termlab hand-in');
    const text = readFileSync(md, 'utf8');
    expect(text).toContain('| student | submission | pairs | predictions right |');
    expect(text).toMatch(/\| Grace Hopper \| .*grace\.tar\.gz \| grace: pass \| 2 of 2 \| 2 \| 0 \| 0 \| 0 \|/);
    for (const flag of ['-o json', '--junit']) {
      const refused = await runCli(
        [
          'grade',
          klass,
          '--gradebook',
          join(root, 'x.csv'),
          ...(flag === '-o json' ? ['-o', 'json'] : [flag, join(root, 'x.xml')]),
        ],
        offline,
      );
      expect(refused).toMatchObject({
        code: EXIT.badInput,
        stderr: expect.stringContaining(`${flag} cannot go with --gradebook`),
      });
    }
  });
});

describe.concurrent('a .zip hand-in is held to the same rules as a .tar.gz', () => {
  it.each([
    [
      'a symbolic link',
      { 'a.observation.json': [strToU8('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }] },
      /member "a.observation.json" is not a plain file \(a link or a device\)/,
    ],
    [
      'a directory',
      { 'nested/a.observation.json': strToU8('{}') },
      /member "nested\/a.observation.json" is not a plain file name/,
    ],
    [
      'a member over the limit',
      { 'big.observation.json': new Uint8Array(17 * 1024 * 1024) },
      /member "big.observation.json" is \d+ bytes, over the/,
    ],
  ] as const)('refuses a zip with %s', async (_what, members, message) => {
    const archive = join(root, `bad-${_what.replace(/ /g, '-')}.zip`);
    writeFileSync(archive, zipSync(members as Parameters<typeof zipSync>[0], { level: 9 }));
    await expect(openArchive(archive)).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringMatching(message),
    });
  });
});
