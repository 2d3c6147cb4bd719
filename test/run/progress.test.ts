// What a run prints while it runs: on a terminal a live table whose countdown says what it counts down to;
// piped (a CI log, `| tee`) one line per scenario finished, so the result table is not buried.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../harness/run/progress.ts';
import { type CliResult, runCliIn } from '../support/cli.ts';

const root = mkdtempSync(join(tmpdir(), 'termlab-progress-'));
const isolated = () => ({
  TERMLAB_STATE_DIR: mkdtempSync(join(root, 'state-')),
  KUBECONFIG: '/nonexistent/kubeconfig',
});

/** The CLI run from a folder of its own, its output piped, as in CI. */
function runIn(cwd: string, args: string[]): Promise<CliResult> {
  return runCliIn(cwd, args, isolated());
}

// Each far from the model's edges: on a loaded CI machine a late work timer must not turn a near-tie into
// "too close to call" (quick-b's TERM lands ~1.5 s after the accept; its work would end at 5 s).
const TWO = `scenarios:
  - { name: quick-a, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 5, workMs: 800, deleteDelayMs: 200 }
  - { name: quick-b, mode: immediate, preStop: { kind: none }, terminationGracePeriodSeconds: 5, workMs: 5000, deleteDelayMs: 200 }
`;

const predictionsFor = (names: string[], scenarios?: string) =>
  `student: Ada Lovelace\n${scenarios ? `scenarios: ${scenarios}\n` : ''}predictions:\n${names.map((n) => `  ${n}: { outcome: completed, exitCode: 0 }\n`).join('')}`;

describe('run progress', () => {
  it('offers to seal ./predictions.yaml only when it predicts the scenarios of this run', async () => {
    const cwd = mkdtempSync(join(root, 'cwd-'));
    writeFileSync(join(cwd, 'two.yaml'), TWO);
    // Predictions of another scenario set (the default lab's): sealing them here would be refused.
    writeFileSync(join(cwd, 'predictions.yaml'), predictionsFor(['short-grace', 'restored-grace']));
    const other = await runIn(cwd, [
      'run',
      '--sim',
      '--reveal', // the hidden answers' note would follow the line otherwise
      '--scenarios',
      'two.yaml',
      '--output-dir',
      'other',
      '--only',
      'quick-a',
    ]);
    expect(other.code, other.stdout + other.stderr).toBe(0);
    expect(other.stdout.split('\n')).toContain('no predictions sealed');
    // Predictions of this set: the hint, and following it seals them.
    writeFileSync(join(cwd, 'predictions.yaml'), predictionsFor(['quick-a', 'quick-b'], 'two.yaml'));
    const own = await runIn(cwd, [
      'run',
      '--sim',
      '--scenarios',
      'two.yaml',
      '--output-dir',
      'own',
      '--only',
      'quick-a',
    ]);
    expect(own.stdout).toContain(
      './predictions.yaml is here and predicts these scenarios: run with --predictions predictions.yaml',
    );
  }, 120_000);

  it('piped: one line per scenario finished between the run header and the table, no phase lines', async () => {
    const cwd = mkdtempSync(join(root, 'cwd-'));
    writeFileSync(join(cwd, 'two.yaml'), TWO);
    const r = await runIn(cwd, ['run', '--sim', '--scenarios', 'two.yaml', '--output-dir', 'out']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const from = lines.findIndex((l) => l.startsWith('no predictions sealed'));
    const to = lines.findIndex((l) => l.startsWith('scenario '));
    expect(from, r.stdout).toBeGreaterThan(0);
    const progress = lines.slice(from + 1, to).filter((l) => l.trim() !== '');
    expect(progress, r.stdout).toHaveLength(2);
    for (const [i, line] of progress.entries())
      expect(line).toMatch(new RegExp(`^\\[\\d+\\.\\ds\\] quick-[ab]  done \\(${i + 1} of 2 finished\\)$`));
  }, 120_000);

  it('at a terminal: the countdown says what deadline it counts down to', () => {
    let written = '';
    const progress = createProgress(
      [{ name: 'short-grace', deadlineSeconds: 104 }],
      (t) => {
        written += t;
      },
      true,
    );
    progress.stop();
    expect(written).toMatch(/short-grace .* pod deadline in 10[34]s/);
    expect(written).toContain(
      "pod deadline in Ns: should termlab stop before it cleans up, the scenario's pods end without it after Ns",
    );
  });

  it('on the simulated cluster the legend names no `termlab reap`: the cluster and its pods end with the run', () => {
    const legend = (reapable: boolean) => {
      let written = '';
      createProgress(
        [{ name: 'short-grace', deadlineSeconds: 104 }],
        (t) => {
          written += t;
        },
        true,
        false,
        reapable,
      ).stop();
      return written.split('\n')[0]!;
    };
    // A student who follows it on --sim gets "cannot load kubeconfig" (test/guides/follow.test.ts follows it).
    expect(legend(false)).toBe(
      "pod deadline in Ns: should termlab stop before it cleans up, the scenario's pods end without it after Ns (their activeDeadlineSeconds)",
    );
    expect(legend(true)).toContain('`termlab reap` past their expiry');
  });
});
