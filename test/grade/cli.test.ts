import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { graceCaption } from '../../harness/report/format.ts';
import { runCli } from '../support/cli.ts';
import { buildObservation, exampleObservations } from '../support/observations.ts';
import { repoRoot } from '../support/processes.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig', HOME: mkdtempSync(join(tmpdir(), 'termlab-home-')) };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'termlab-grade-'));
  for (const [name, o] of Object.entries(exampleObservations()))
    writeFileSync(join(dir, `${name}.observation.json`), JSON.stringify(o));
});

describe.concurrent('termlab grade', () => {
  it('grades a directory offline, writes every report, and never touches the inputs', async () => {
    const before = readdirSync(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs, readFileSync(join(dir, f), 'utf8')]);
    const out = mkdtempSync(join(tmpdir(), 'termlab-out-'));
    const r = await runCli(
      ['grade', dir, '--md', join(out, 'r.md'), '--html', join(out, 'r.html'), '--junit', join(out, 'r.xml')],
      offline,
    );
    expect(r.code).toBe(1); // some examples differ from the model on purpose
    expect(r.stdout).toContain('6 graded, 3 passed every check, 1 evidence invalid, 0 inconclusive, 0 unreadable');
    expect(r.stdout).toContain('lab pair grace: pass');
    expect(
      readdirSync(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs, readFileSync(join(dir, f), 'utf8')]),
    ).toEqual(before);
    const md = readFileSync(join(out, 'r.md'), 'utf8');
    expect(md).toContain(
      '| short-grace | graceful | exec sleep 3s | 5s | 10s | cut | 137 (Error) | ✅ matches the model |',
    );
    expect(md).toMatch(/```mermaid\ngantt[\s\S]*dateFormat x[\s\S]*SIGTERM :milestone, term0, \d+, \d+/);
    const xml = readFileSync(join(out, 'r.xml'), 'utf8');
    expect(xml).toContain('<property name="podUid" value="uid-0002"/>');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(6 * 25 + 1);
    expect(readFileSync(join(out, 'r.html'), 'utf8')).toMatch(/<svg [^>]*aria-label="timeline of short-grace"/);
  });

  it("says under each result the chart's caption, the same sentence in one line", async () => {
    const node = join(repoRoot, 'test/grade/fixtures/node');
    const r = await runCli(['grade', node], offline);
    const graded = await gradePaths([node]);
    const said = (scenario: string) => {
      const lines = r.stdout.split('\n');
      const at = lines.findIndex((l) => l.includes(`  ${scenario}  (`));
      return lines.slice(at + 1, at + 3).map((l) => l.trim());
    };
    for (const scenario of ['short-grace', 'restored-grace', 'hook-outlasts-grace', 'no-prestop']) {
      const caption = graceCaption(graded.results.find((x) => x.scenario === scenario)!);
      expect(caption, scenario).toBeTruthy();
      expect(said(scenario), r.stdout).toContain(caption);
    }
    expect(said('short-grace')).toContainEqual(
      expect.stringMatching(
        /^The hook used 3 of the 5 s; SIGTERM came with 2 s left; the request needed \d+(\.\d)? s more: cut at SIGKILL\.$/,
      ),
    );
  });

  it('exits 0 when every check passes, and prints JSON on request', async () => {
    const one = join(dir, 'cut-17-immediate.observation.json');
    const r = await runCli(['grade', one, '-o', 'json'], offline);
    expect(r.code).toBe(0);
    const parsed = JSON.parse(r.stdout);
    expect(parsed.results[0]).toMatchObject({ scenario: 'immediate', verdict: 'matches-model', exitCode: 17 });
  });

  it.each([
    ['malformed JSON', '{"schemaVersion": 1,', /\(top level\): not JSON at line 1, column \d+/],
    [
      'wrong types',
      JSON.stringify({ ...buildObservation(), request: { ...buildObservation().request, bytes: 'lots' } }),
      /request\.bytes: .*number/,
    ],
    [
      'an unknown schema version',
      JSON.stringify({ ...buildObservation(), schemaVersion: 99 }),
      /schemaVersion: this termlab reads versions 1, 2, 3, 4, 5, 6, 7, the file says 99/,
    ],
    ['another kind of file', JSON.stringify({ hello: 'world' }), /schemaVersion/],
  ])('names the problem in %s, exits 2, and still grades the rest', async (_what, text, message) => {
    const mixed = mkdtempSync(join(tmpdir(), 'termlab-bad-'));
    writeFileSync(join(mixed, 'a-bad.observation.json'), text);
    writeFileSync(join(mixed, 'b-good.observation.json'), JSON.stringify(buildObservation()));
    const r = await runCli(['grade', mixed], offline);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`a-bad\\.observation\\.json: ${message.source}`));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toContain('short-grace');
    expect(r.stdout).toContain('1 graded');
  });

  it('says so when a directory holds no observation files (exit 2)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'termlab-empty-'));
    const r = await runCli(['grade', empty], offline);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('no *.observation.json files in it') });
  });

  it('says plainly that a folder named is empty or missing, never that a file was unreadable (exit 2)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'termlab-empty-'));
    const r = await runCli(['grade', empty], offline);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`nothing graded: ${empty} has no observation files (*.observation.json) in it`);
    const missing = join(empty, 'no-such-run');
    const m = await runCli(['grade', missing], offline);
    expect(m.code).toBe(2);
    expect(m.stdout).toContain(`nothing graded: ${missing} does not exist`);
    // Beside a file that was graded, the missing folder is still named as missing.
    const both = await runCli(['grade', missing, join(dir, 'cut-17-immediate.observation.json')], offline);
    expect(both.code).toBe(2);
    expect(both.stdout).toContain(`0 unreadable; ${missing} does not exist`);
    for (const out of [r.stdout, m.stdout, both.stdout]) expect(out).not.toContain('1 unreadable');
  });

  it('asks for a ~ left in a predictions template to be filled in, naming the scenario and the field', async () => {
    const template = join(mkdtempSync(join(tmpdir(), 'termlab-template-')), 'p.yaml');
    expect(
      (await runCli(['predict', '--template', '--output-file', template, '--only', 'short-grace'], offline)).code,
    ).toBe(0);
    writeFileSync(template, readFileSync(template, 'utf8').replace('outcome: ~', 'outcome: cut'));
    const r = await runCli(
      ['grade', join(dir, 'cut-17-immediate.observation.json'), '--predictions', template],
      offline,
    );
    expect(r).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "predictions.short-grace.exitCode is still ~: fill this in with your prediction for short-grace (the container's exit code, 0-255)",
      ),
    });
    expect(r.stderr).not.toContain('Invalid');
  });

  it('refuses an oversized file with a clear error instead of reading it', async () => {
    const big = mkdtempSync(join(tmpdir(), 'termlab-big-'));
    const path = join(big, 'huge.observation.json');
    writeFileSync(path, Buffer.alloc(17 * 1024 * 1024, 32));
    const r = await runCli(['grade', path], offline);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/huge\.observation\.json: \d+ bytes is larger than the 16777216-byte limit/);
  });

  it('rejects a bad predictions file and bad flags with exit 2', async () => {
    const p = join(dir, '..', 'bad-predictions.yaml');
    writeFileSync(p, 'predictions: { x: { outcome: 7 } }');
    expect(await runCli(['grade', dir, '--predictions', p], offline)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('predictions.x.outcome'),
    });
    const good = join(dir, '..', 'predictions.yaml');
    writeFileSync(
      good,
      'predictions:\n  short-grace: { outcome: cut, exitCode: 137 }\n  immediate: { outcome: completed, exitCode: 0 }\n',
    );
    const graded = await runCli(
      [
        'grade',
        join(dir, 'cut-137-after-grace.observation.json'),
        join(dir, 'cut-17-immediate.observation.json'),
        '--predictions',
        good,
      ],
      offline,
    );
    expect(graded.code).toBe(1);
    expect(graded.stdout).toContain('prediction ✓ you predicted cut/137 and that is what happened');
    expect(graded.stdout).toContain('prediction fail: you predicted completed/0, the cluster did cut/17');
    expect(await runCli(['grade', '--bogus'], offline)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--bogus'),
    });
    expect((await runCli(['grade'], offline)).code).toBe(2);
  });

  it('keeps docs/observation.schema.json in sync with the zod schema', async () => {
    const r = await runCli(['schema'], offline);
    expect(r.stdout).toBe(readFileSync(join(repoRoot, 'docs', 'observation.schema.json'), 'utf8'));
  });

  it('keeps the committed examples valid and graded as named', async () => {
    const r = await runCli(['grade', join(repoRoot, 'reports', 'examples'), '-o', 'json'], offline);
    const verdicts = Object.fromEntries(
      JSON.parse(r.stdout).results.map((x: { source: string; verdict: string }) => [
        x.source.split('/').pop(),
        x.verdict,
      ]),
    );
    expect(verdicts).toMatchObject({
      'completed-0.observation.json': 'matches-model',
      'evidence-invalid.observation.json': 'evidence-invalid',
      'oom-137.observation.json': 'differs-from-model',
    });
    expect(Object.keys(verdicts)).toHaveLength(6);
  });
});
