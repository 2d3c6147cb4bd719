// Issue 39: `npm start` (a run with no predictions sealed) printed every outcome, exit code and "model says"
// before the student had predicted. Now the terminal and the reports show the setups alone and say how to see
// the rest (predict, or --reveal); the evidence is written in full and `termlab grade` shows it all, as before.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { exitReason } from '../../harness/run/summary.ts';
import { TermlabError } from '../../lib/errors.ts';
import { runCli } from '../support/cli.ts';

let sim: SimCluster;
let dir: string;
beforeAll(async () => {
  sim = await startSimCluster();
  dir = mkdtempSync(join(tmpdir(), 'termlab-reveal-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim.stop();
});

/** Anything that tells what happened or what the model says. */
const ANSWERS = /\bcut\b|\bcompleted\b|\b137\b|model says|matches the model|differs from the model|inconclusive|✅|❌/;

const run = (out: string, ...extra: string[]) =>
  runCli([
    'run',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    // One request cut by the kill, one that completes: both answers are there to be hidden.
    '--only',
    'short-grace,hook-fits-grace',
    '--owner',
    `reveal-${extra.length}`,
    '--output-dir',
    out,
    ...extra,
  ]);

describe.concurrent('a run with no predictions sealed', () => {
  it('shows the setups, hides the answers in the table and the reports, and says how to see them', async ({
    expect,
  }) => {
    const out = join(dir, 'hidden');
    const r = await run(out);
    const shown = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    expect(r.code, shown).toBe(0);
    // Said before the run starts, and again under the table.
    expect(r.stdout, shown).toContain(
      "no predictions sealed: the outcomes and the model's answers stay hidden (predict first, or pass --reveal)\n",
    );
    // The setup a student predicts from: each scenario with its hook and grace.
    expect(r.stdout, shown).toMatch(/^scenario +preStop +grace$/m);
    expect(r.stdout, shown).toMatch(/^short-grace +exec sleep 3s +5s$/m);
    expect(r.stdout, shown).toMatch(/^hook-fits-grace +exec sleep 3s +30s$/m);
    // No outcome, exit code, verdict or model's answer, on the terminal or in any report.
    const hint = r.stdout.split('\n').find((l) => l.startsWith('answers hidden'));
    expect(hint, shown).toContain('Predict each outcome first: `termlab predict --only short-grace,hook-fits-grace`');
    expect(hint, shown).toContain('--reveal');
    expect(r.stdout.replace(hint!, '').replace("model's answers stay hidden", ''), shown).not.toMatch(ANSWERS);
    // Nor the charts' captions: each is an answer.
    expect(r.stdout, shown).not.toMatch(/The hook used|SIGTERM came with/);
    for (const report of ['report.md', 'report.html', 'junit.xml']) {
      const text = readFileSync(join(out, report), 'utf8');
      expect(text, report).toContain('short-grace');
      expect(text.replaceAll("model's answers", '').replaceAll('model&#39;s answers', ''), report).not.toMatch(ANSWERS);
      expect(text, report).toContain('--reveal');
    }
    // The evidence is whole: the observations hold what happened, and grade shows it as ever.
    const observations = readdirSync(out).filter((f) => f.endsWith('.observation.json'));
    expect(observations.sort()).toEqual(['hook-fits-grace.observation.json', 'short-grace.observation.json']);
    const cut = JSON.parse(readFileSync(join(out, 'short-grace.observation.json'), 'utf8'));
    expect(cut.request.outcome).toBe('cut');
    expect(cut.finalState.exitCode).toBe(137);
    const graded = await runCli(['grade', out], { KUBECONFIG: '/nonexistent' });
    expect(graded.stdout, graded.stderr).toMatch(/✅ matches the model {2}short-grace /);
  });

  it('--reveal shows the outcomes, exit codes, the model and the verdicts', async ({ expect }) => {
    const out = join(dir, 'revealed');
    const r = await run(out, '--reveal');
    const shown = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    expect(r.code, shown).toBe(0);
    expect(r.stdout, shown).toMatch(
      /^short-grace +exec sleep 3s +5s +cut +137 \(Error\) +cut\/137 +✅ matches the model$/m,
    );
    expect(r.stdout, shown).toMatch(
      /^hook-fits-grace +exec sleep 3s +30s +completed +0 \(Completed\) +completed\/0 +✅/m,
    );
    // Each chart's caption, as report.html has it under the chart, one line per scenario.
    expect(r.stdout, shown).toMatch(
      /^ {2}short-grace: The hook used 3 of the 5 s; SIGTERM came with 2 s left; the request needed \d+(\.\d)? s more: cut at SIGKILL\.$/m,
    );
    const html = readFileSync(join(out, 'report.html'), 'utf8').replaceAll('&#39;', "'");
    for (const line of r.stdout.split('\n').filter((l) => / {2}[\w-]+: (The hook|No hook)/.test(l)))
      expect(html, line).toContain(`<p class="caption">${line.replace(/^ {2}[\w-]+: /, '')}</p>`);
    expect(r.stdout, shown).toMatch(/^ {2}hook-fits-grace: The hook used 3 of the 30 s; SIGTERM came with 27 s left;/m);
    expect(r.stdout, shown).not.toMatch(/answers hidden/);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/\| short-grace \|.*\| cut \|/);
  });
});

describe('the closing line of a run whose answers are hidden', () => {
  it('says a result is hidden, not which scenario differed or why; an early end is still named', () => {
    const differs = { scenario: 'short-grace', verdict: 'differs-from-model', checks: [] } as never;
    const ending = { results: [differs], pairs: [], problems: [], failures: [] };
    expect(exitReason(1, ending)).toBe('exit 1: 1 scenario differs from the model');
    expect(exitReason(1, { ...ending, hidden: true })).toBe(
      'exit 1: results hidden until you predict (--reveal shows them)',
    );
    const failures = [{ scenario: 'no-prestop', error: new TermlabError('POD_NOT_READY', 'not Ready') }];
    expect(exitReason(1, { ...ending, failures, hidden: true })).toBe(
      'exit 1: results hidden until you predict (--reveal shows them); no-prestop ended early (POD_NOT_READY)',
    );
  });
});
