import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { create, list } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_MARKER, MANIFEST_NAME, ManifestSchema, sha256 } from '../../harness/pack/manifest.ts';
import { packRun } from '../../harness/pack/pack.ts';
import { openArchive } from '../../harness/pack/unpack.ts';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import { predictionsText, writeRunDir } from '../class/fixtures.ts';
import { type CliResult, runCli, runCliIn } from '../support/cli.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig' };
let root: string;
let runDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'termlab-pack-test-'));
  runDir = writeRunDir(root, { student: 'Ada Lovelace', tag: 'ada' });
});

async function members(archive: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  await list({
    file: archive,
    onReadEntry: (e) => {
      found.set(e.path, e.size);
    },
  });
  return found;
}

/** Builds an archive by hand from a staging directory, as someone tampering would. */
async function handMade(
  name: string,
  files: Record<string, string | Buffer>,
  extra: (dir: string) => string[] = () => [],
): Promise<string> {
  const staging = mkdtempSync(join(tmpdir(), 'termlab-handmade-'));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(staging, file), text);
  const archive = join(root, name);
  await create({ gzip: true, file: archive, cwd: staging, portable: true, preservePaths: true }, [
    ...Object.keys(files),
    ...extra(staging),
  ]);
  return archive;
}

/** `termlab pack` as a student runs it: from a folder of their own, which may hold files of other exercises. */
function packIn(cwd: string, args: string[]): Promise<CliResult> {
  return runCliIn(cwd, ['pack', ...args], offline);
}

describe.concurrent('termlab pack', () => {
  it('refuses an interrupted run, naming the signal its marker recorded (SIGTERM is no Ctrl-C)', async () => {
    const stopped = writeRunDir(join(root, 'stopped'), { student: 'Tess Term', tag: 'stopped' });
    writeFileSync(join(stopped, INTERRUPTED_MARKER), 'run r1 was interrupted (SIGTERM) before it finished\n');
    await expect(packRun(stopped, { out: join(root, 'stopped.tar.gz') })).rejects.toThrow(
      /this run was interrupted \(SIGTERM\) before it finished .*cannot be handed in/,
    );
  });

  it('writes the archive where the help says, and reads no ./predictions.yaml the student never named', async () => {
    // The student's folder holds predictions of another exercise, naming someone else.
    const cwd = mkdtempSync(join(tmpdir(), 'termlab-pack-cwd-'));
    writeFileSync(join(cwd, 'predictions.yaml'), predictionsText('Mallory Other'));
    const help = await runCli(['pack', '--help'], offline);
    expect(help.stdout).toContain('RUN.tar.gz in the current directory');

    // A sealed run: the sealed predictions are packed and the unrelated file is not mentioned.
    const sealed = await packIn(cwd, [runDir]);
    expect(sealed.code, sealed.stderr).toBe(0);
    expect(sealed.stderr).toBe('');
    const archive = join(cwd, `${basename(runDir)}.tar.gz`);
    expect(sealed.stdout.trimEnd().split('\n').at(-1)).toBe(archive);
    expect(existsSync(archive)).toBe(true);

    // A run made without --predictions, none in its folder: nothing is taken from ./predictions.yaml.
    const bare = writeRunDir(join(root, 'bare'), { student: 'Bob Byte', tag: 'bare', sealed: false });
    rmSync(join(bare, 'predictions.yaml'));
    const unsealed = await packIn(cwd, [bare, '--output-file', 'bob.tar.gz']);
    expect(unsealed.code, unsealed.stderr).toBe(0);
    expect(unsealed.stdout).toContain('for an unnamed student');
    expect(unsealed.stdout + unsealed.stderr).not.toContain('Mallory');
    expect(unsealed.stderr).toContain('no predictions: the run was started without --predictions');
    const opened = await openArchive(join(cwd, 'bob.tar.gz'));
    expect(opened.files.has('predictions.yaml')).toBe(false);
    expect(ManifestSchema.parse(JSON.parse(opened.files.get(MANIFEST_NAME)!.toString('utf8'))).student).toBeNull();
    const book = join(cwd, 'book.json');
    await runCli(['grade', join(cwd, 'bob.tar.gz'), '--gradebook-json', book], offline);
    const [row] = GradebookSchema.parse(JSON.parse(readFileSync(book, 'utf8'))).rows;
    // --student was never given: the gradebook must not say so.
    expect(row).toMatchObject({ student: 'bob', identity: 'file name' });
  });

  it('packs observations, predictions, reports and a manifest whose hashes match', async () => {
    const out = join(root, 'ada.tar.gz');
    const r = await runCli(['pack', runDir, '--output-file', out], offline);
    expect(r).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('packed 4 file(s) of run run-20261130-ada for Ada Lovelace'),
    });
    expect(r.stdout).toContain(
      `with the predictions the run sealed before its first pod (${join(runDir, 'predictions.yaml')})`,
    );
    expect([...(await members(out)).keys()].sort()).toEqual([
      MANIFEST_NAME,
      'predictions.yaml',
      'report.md',
      'restored-grace.observation.json',
      'short-grace.observation.json',
    ]);
    const opened = await openArchive(out);
    const manifest = ManifestSchema.parse(JSON.parse(opened.files.get(MANIFEST_NAME)!.toString('utf8')));
    expect(manifest).toMatchObject({ student: 'Ada Lovelace', harnessVersion: '0.1.0', runIds: ['run-20261130-ada'] });
    const short = manifest.files.find((f) => f.path === 'short-grace.observation.json')!;
    expect(short.sha256).toBe(sha256(readFileSync(join(runDir, 'short-grace.observation.json'))));
    expect(opened.problems).toEqual([]);
    const graded = await runCli(['grade', out], offline);
    expect(graded.code).toBe(0);
    expect(graded.stdout).toContain(`(${out}:short-grace.observation.json)`);
    expect(graded.stdout).toContain('prediction ✓ you predicted cut/137');
    expect(graded.stdout).toContain('lab pair grace: pass');
    expect(graded.stdout + graded.stderr).not.toContain('termlab-submission-');
  });

  it('says so when the directory holds no run', async () => {
    const r = await runCli(['pack', root, '--output-file', join(root, 'x.tar.gz')], offline);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('no *.observation.json files in it') });
  });

  it('marks an observation changed after packing as evidence invalid', async () => {
    const { archive, manifest } = await packRun(runDir, { out: join(root, 'honest.tar.gz') });
    const opened = await openArchive(archive);
    const files: Record<string, string> = {};
    for (const f of manifest.files) files[f.path] = opened.files.get(f.path)!.toString('utf8');
    files[MANIFEST_NAME] = opened.files.get(MANIFEST_NAME)!.toString('utf8');
    // "Fix" the cut run so that it completed, keeping the old manifest.
    const edited = JSON.parse(files['short-grace.observation.json']!);
    edited.request.outcome = 'completed';
    files['short-grace.observation.json'] = JSON.stringify(edited);
    const tampered = await handMade('tampered.tar.gz', files);
    const r = await runCli(['grade', tampered, '-o', 'json'], offline);
    // Graded, and graded invalid: a check failed (1), not a file that could not be read (2).
    expect(r.code).toBe(1);
    const parsed = JSON.parse(r.stdout);
    const short = parsed.results.find((x: { scenario: string }) => x.scenario === 'short-grace');
    expect(short.verdict).toBe('evidence-invalid');
    expect(short.checks).toContainEqual({
      id: 'submission.manifest',
      status: 'fail',
      reason: expect.stringContaining('does not match its sha256 in the manifest'),
    });
    expect(parsed.results.find((x: { scenario: string }) => x.scenario === 'restored-grace').verdict).toBe(
      'matches-model',
    );
    expect(parsed.problems).toEqual([]);
    expect(r.stderr).toMatch(/tampered\.tar\.gz:short-grace\.observation\.json: evidence invalid/);
    const counted = await runCli(['grade', tampered], offline);
    expect(counted.stdout).toContain(
      '2 graded, 1 passed every check, 1 evidence invalid, 0 inconclusive, 0 unreadable',
    );
    expect(counted.stdout).toMatch(/lab pair grace: inconclusive — .*evidence of the short-grace run is invalid/);

    const unlisted = await handMade('unlisted.tar.gz', {
      ...files,
      'extra.observation.json': files['restored-grace.observation.json']!,
    });
    expect((await runCli(['grade', unlisted], offline)).stderr).toContain(
      "extra.observation.json is not in the archive's manifest",
    );
    const { [MANIFEST_NAME]: _dropped, ...noManifest } = files;
    const bare = await runCli(['grade', await handMade('bare.tar.gz', noManifest), '-o', 'json'], offline);
    expect(JSON.parse(bare.stdout).results.every((x: { verdict: string }) => x.verdict === 'evidence-invalid')).toBe(
      true,
    );
  });

  it.each([
    // The file outside is made here: tar reads it when it packs, wherever the temporary folder is.
    [
      'a path that climbs out',
      (dir: string) => {
        mkdirSync(join(dir, 'sub'));
        writeFileSync(join(dir, 'evil'), 'x');
        writeFileSync(join(dir, '..', 'outside'), 'x');
        return ['sub/../evil', '../outside'];
      },
      /member "(sub\/\.\.\/evil|\.\.\/outside)" is not a plain file name/,
    ],
    [
      'a symbolic link',
      (dir: string) => {
        symlinkSync('/etc/passwd', join(dir, 'link.observation.json'));
        return ['link.observation.json'];
      },
      /member "link.observation.json" is a SymbolicLink/,
    ],
    [
      'a directory',
      (dir: string) => {
        mkdirSync(join(dir, 'nested'));
        writeFileSync(join(dir, 'nested', 'a.observation.json'), '{}');
        return ['nested'];
      },
      /member "nested\/" is a Directory/,
    ],
  ])('refuses an archive with %s, and grades nothing from it', async (_what, extra, message) => {
    const archive = await handMade(`bad-${_what.replace(/ /g, '-')}.tar.gz`, { 'a.txt': 'hello' }, extra);
    await expect(openArchive(archive)).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringMatching(message),
    });
    const r = await runCli(['grade', archive], offline);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the archive was refused/);
  });

  it('refuses an oversized member and a gzip bomb, and a file that is no archive', async () => {
    const big = await handMade('big.tar.gz', { 'huge.observation.json': Buffer.alloc(17 * 1024 * 1024, 32) });
    await expect(openArchive(big)).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringMatching(/member "huge.observation.json" is 17825792 bytes, over the 16777216-byte limit/),
    });
    // Within every size limit, but 15 MB of zeros squeezed into a few KB: a bomb, stopped as one.
    const bomb = await handMade('bomb.tar.gz', { 'zeros.observation.json': Buffer.alloc(15 * 1024 * 1024, 0) });
    await expect(openArchive(bomb)).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringContaining('max decompression ratio exceeded'),
    });
    const junk = join(root, 'junk.tar.gz');
    writeFileSync(junk, 'this is not gzip');
    await expect(openArchive(junk)).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringContaining('not a readable .tar.gz'),
    });
  });
});
