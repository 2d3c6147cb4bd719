import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { parsePredictions } from '../../harness/grade/predictions.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'termlab-predict-'));

/**
 * Runs `termlab predict` on a real pseudo-terminal (util-linux `script`) and answers each prompt
 * as it appears: the next answer is sent only once the output shows the prompt it answers.
 */
function underPty(
  args: string[],
  dialogue: [prompt: string, answer: string][],
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, 'bin/termlab.js', 'predict', ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TERM: 'dumb' },
  });
  let output = '';
  let searchFrom = 0;
  let next = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    while (next < dialogue.length) {
      const [prompt, answer] = dialogue[next]!;
      const at = output.indexOf(prompt, searchFrom);
      if (at < 0) break;
      searchFrom = at + prompt.length;
      next++;
      child.stdin.write(`${answer}\r`);
    }
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('termlab predict', () => {
  it('asks at a terminal, re-asks a bad answer, and writes a file the grader reads', async () => {
    const out = join(dir, 'mine.yaml');
    const r = await underPty(
      ['--output-file', out, '--only', 'short-grace,restored-grace'],
      [
        ['your name: ', 'Ada Lovelace'],
        ['the request: completed, cut, rejected? ', 'maybe'],
        ['please answer completed, cut, rejected', 'cut'],
        ['the exit code (0-255)? ', '999'],
        ['please answer a whole number from 0 to 255', '137'],
        ['the request: completed, cut, rejected? ', 'completed'],
        ['the exit code (0-255)? ', '0'],
      ],
    );
    expect(r.output).toContain('short-grace  (graceful, preStop exec sleep 3s, grace 5s, work 10s, delete after 1s)');
    expect(r.output).not.toMatch(/model|SIGKILL/);
    expect(r.code).toBe(EXIT.ok);
    expect(parsePredictions(readFileSync(out, 'utf8'), out)).toEqual({
      student: 'Ada Lovelace',
      predictions: {
        'short-grace': { outcome: 'cut', exitCode: 137 },
        'restored-grace': { outcome: 'completed', exitCode: 0 },
      },
    });
  });

  it("asks a retry scenario's attempts and effects too, and writes them for the grader", async () => {
    const out = join(dir, 'retries.yaml');
    const r = await underPty(
      ['--output-file', out, '--scenarios', 'manifests/retries.yaml', '--only', 'retry-with-key', '--student', 'Ada'],
      [
        ['the request: completed, cut, rejected? ', 'cut'],
        ['the exit code (0-255)? ', '137'],
        ['the attempts the client makes (1 or more)? ', '0'],
        ['please answer a whole number, 1 or more', '2'],
        ['the effects the ledger records (0 or more)? ', '1'],
      ],
    );
    expect(r.code).toBe(EXIT.ok);
    expect(parsePredictions(readFileSync(out, 'utf8'), out).predictions).toEqual({
      'retry-with-key': { outcome: 'cut', exitCode: 137, attempts: 2, effects: 1 },
    });
  });

  it('writes nothing when the student stops half-way (Ctrl-D)', async () => {
    const out = join(dir, 'half.yaml');
    const r = await underPty(
      ['--output-file', out, '--only', 'short-grace', '--student', 'Bob'],
      [['the request: completed, cut, rejected? ', '\u0004']],
    );
    expect(r.code).toBe(EXIT.interrupted);
    expect(() => readFileSync(out)).toThrow();
  });

  it('writes a commented template with the name, which the grader refuses until filled in', async () => {
    const out = join(dir, 'template.yaml');
    const r = await runCli(['predict', '--template', '--output-file', out, '--student', 'Ada "the first" Lovelace']);
    expect(r.code).toBe(EXIT.ok);
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('student: "Ada \\"the first\\" Lovelace"');
    expect(text).toMatch(
      / {2}hook-outlasts-grace:\n {4}# graceful, preStop exec sleep 10s, grace 5s, work 12s, delete after 1s\n {4}outcome: ~\n {4}exitCode: ~\n/,
    );
    expect(text).not.toMatch(/137|SIGKILL|model/);
    expect(() => parsePredictions(text, out)).toThrow(/predictions\.hook-fits-grace\.outcome/);
    const filled = text.replace(/outcome: ~/g, 'outcome: cut').replace(/exitCode: ~/g, 'exitCode: 137');
    expect(Object.keys(parsePredictions(filled, out).predictions)).toHaveLength(8);
  });

  it('names an output path it cannot write: exit 2, no stack', async () => {
    const missing = join(dir, 'no-such-folder', 'p.yaml');
    for (const out of [missing, '/proc/p.yaml']) {
      const r = await runCli(['predict', '--template', '--output-file', out]);
      expect(r).toMatchObject({ code: EXIT.badInput, stderr: expect.stringContaining(`${out} cannot be written`) });
      expect(r.stderr).not.toMatch(/internal error|\bat /);
    }
  });

  it('names its scenario set, and its next: hint keeps the --scenarios and --only it was made with', async () => {
    const sidecars = join(dir, 'sidecar-predictions.yaml');
    const r = await runCli([
      'predict',
      '--scenarios',
      'manifests/sidecars.yaml',
      '--template',
      '--output-file',
      sidecars,
    ]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain(
      `then termlab run --sim --scenarios manifests/sidecars.yaml --predictions ${sidecars}\n`,
    );
    const filled = readFileSync(sidecars, 'utf8')
      .replace(/outcome: ~/g, 'outcome: cut')
      .replace(/exitCode: ~/g, 'exitCode: 0');
    expect(parsePredictions(filled, sidecars).scenarios).toBe('manifests/sidecars.yaml');
    const pair = join(dir, 'pair-predictions.yaml');
    const p = await runCli(['predict', '--only', 'short-grace,restored-grace', '--template', '--output-file', pair]);
    expect(p.stdout).toContain(`then termlab run --sim --only short-grace,restored-grace --predictions ${pair}\n`);
  });

  it('is refused by a run of scenarios it does not cover, before anything is sealed or started, naming its set', async () => {
    const file = join(dir, 'sidecars-filled.yaml');
    expect(
      (await runCli(['predict', '--scenarios', 'manifests/sidecars.yaml', '--template', '--output-file', file])).code,
    ).toBe(0);
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace(/outcome: ~/g, 'outcome: cut')
        .replace(/exitCode: ~/g, 'exitCode: 0'),
    );
    const state = mkdtempSync(join(tmpdir(), 'termlab-predict-state-'));
    const r = await runCli(['run', '--sim', '--predictions', file, '--output-dir', join(dir, 'never-run')], {
      TERMLAB_STATE_DIR: state,
    });
    expect(r).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining(
        `${file} has predictions for none of the 8 scenario(s) this run would run (hook-fits-grace, short-grace, restored-grace, immediate-exit, …): it was made for --scenarios manifests/sidecars.yaml`,
      ),
    });
    expect(r.stderr).toContain(`termlab run --scenarios manifests/sidecars.yaml --predictions ${file}`);
    expect(r.stdout).not.toContain('predictions sealed');
    // A run record is saved once a cluster answered: none, so none was started.
    expect(readdirSync(state)).toEqual([]);
    // Part of the set predicted: the run of the whole set is refused too, told which --only the file predicts.
    const pair = join(dir, 'pair-filled.yaml');
    writeFileSync(
      pair,
      'predictions:\n  short-grace: { outcome: cut, exitCode: 137 }\n  restored-grace: { outcome: completed, exitCode: 0 }\n',
    );
    const part = await runCli(['run', '--sim', '--predictions', pair, '--output-dir', join(dir, 'never-run')], {
      TERMLAB_STATE_DIR: state,
    });
    expect(part).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining('has predictions for 2 of the 8 scenario(s)'),
    });
    expect(part.stderr).toContain(`termlab run --only short-grace,restored-grace --predictions ${pair}`);
  });

  it('refuses to overwrite predictions, and to ask questions without a terminal', async () => {
    const out = join(dir, 'existing.yaml');
    writeFileSync(out, 'predictions: {}\n');
    expect(await runCli(['predict', '--template', '--output-file', out])).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining('already exists'),
    });
    expect(await runCli(['predict', '--output-file', join(dir, 'none.yaml')])).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining('not at a terminal: use --template'),
    });
    expect(
      await runCli(['predict', '--template', '--output-file', join(dir, 'x.yaml'), '--student', 'a\nb']),
    ).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining('--student: one line'),
    });
  });
});
