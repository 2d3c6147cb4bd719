// Each exit code of the CLI from a real `termlab` process, and each failure issue 28 found exiting
// 70 ("please report it") now ending as a TermlabError with its own code, naming the flag or path.
// 130 (Ctrl-C) is driven by test/run/interrupt.test.ts.
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor, gravestExit, TermlabError } from '../../lib/errors.ts';
import { escapedApiFailure } from '../../harness/kube/failures.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { Cleaner } from '../../harness/run/cleaner.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { runPhases } from '../../harness/run/phases.ts';
import { type ScenarioContext, terminatePhase } from '../../harness/run/scenario.ts';
import { exitReason } from '../../harness/run/summary.ts';
import type { PodWatch } from '../../harness/run/watch.ts';
import { ScenarioSchema } from '../../harness/scenario/schema.ts';
import { type CliResult, runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const temp = (what: string) => mkdtempSync(join(tmpdir(), `termlab-exit-${what}-`));
/** A path below a regular file: no directory can ever be made there (ENOTDIR). */
function underAFile(): string {
  const file = join(temp('file'), 'a-file');
  writeFileSync(file, 'not a directory\n');
  return join(file, 'below');
}
const isolated = () => ({ TERMLAB_STATE_DIR: temp('state') });
/** One short scenario: these tests are about the run's files and links, not its drain (the matrix's is 10 s). */
function shortScenario(): string {
  const file = join(temp('scenarios'), 'short.yaml');
  writeFileSync(
    file,
    'scenarios:\n  - { name: no-prestop, description: short, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 30, workMs: 1000, deleteDelayMs: 500 }\n',
  );
  return file;
}

/** The CLI run from another working directory (where `reports/` is resolved). */
function runCliIn(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/termlab.js'), ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.concurrent('exit codes from the CLI', () => {
  it('0: every check passed', async () => {
    const r = await runCli(['grade', 'reports/examples/cut-17-immediate.observation.json']);
    expect(r.code, r.stderr).toBe(EXIT.ok);
  });

  it('1: a check failed', async () => {
    const r = await runCli(['grade', 'reports/examples/evidence-invalid.observation.json']);
    expect(r.code, r.stderr).toBe(EXIT.checksFailed);
  });

  it('2: termlab sim --port x names the flag', async () => {
    const r = await runCli(['sim', '--port', 'x']);
    expect(r).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining('--port: expected a whole number 0-65535, got "x"'),
    });
  });

  it('2: a kubeconfig that termlab sim cannot write names the path', async () => {
    const path = join(underAFile(), 'kubeconfig');
    const r = await runCli(['sim', '--kubeconfig-out', path]);
    expect(r).toMatchObject({ code: EXIT.badInput, stderr: expect.stringContaining(path) });
  });

  it('2: an --output-dir directory that cannot be made names the path', async () => {
    const out = underAFile();
    const r = await runCli(['run', '--sim', '--only', 'no-prestop', '--output-dir', out], isolated());
    expect(r.stderr).not.toContain('internal error');
    expect(r).toMatchObject({
      code: EXIT.badInput,
      stderr: expect.stringContaining(`--output-dir ${out} cannot be written (ENOTDIR)`),
    });
  });

  it('2: an --output-dir where no folder can be made (under /proc, below a dangling link) is said before any cluster starts', async ({
    signal,
  }) => {
    const dangling = join(temp('dangling'), 'link');
    symlinkSync(join(dangling, '..', 'gone'), dangling);
    for (const out of ['/proc/termlab-nope', join(dangling, 'run')]) {
      const state = temp('state');
      const r = await runCli(
        ['run', '--sim', '--only', 'no-prestop', '--output-dir', out],
        { TERMLAB_STATE_DIR: state },
        signal,
      );
      expect(r.stderr).not.toContain('internal error');
      expect(r).toMatchObject({
        code: EXIT.badInput,
        stderr: expect.stringContaining(`--output-dir ${out} cannot be written`),
      });
      // A run record is saved once a cluster has answered: none, so none was started or reached.
      expect(readdirSync(state)).toEqual([]);
    }
  });

  it('3: with no kubeconfig, the hint names only flags the command has (--sim only where it is one)', async () => {
    const none = { KUBECONFIG: '', HOME: temp('home') };
    const out = temp('kubeconfig');
    const cases: [string, string[]][] = [
      ['class', ['class', 'student', 'ada', '--namespace', 'lab', '--output-file', join(out, 'ada')]],
      ['reap', ['reap', '--dry-run']],
      ['run', ['run', '--only', 'no-prestop']],
    ];
    for (const [command, args] of cases) {
      const r = await runCli(args, none);
      expect(r).toMatchObject({ code: EXIT.clusterUnreachable, stderr: expect.stringContaining('none found') });
      const has = new Set((await runCli([command, '--help'])).stdout.match(/--[a-z-]+/g));
      for (const flag of r.stderr.match(/--[a-z-]+/g) ?? []) expect(has, `${command}: ${r.stderr}`).toContain(flag);
      expect(r.stderr.includes('--sim')).toBe(command === 'run');
    }
  });

  it('2: a run record that cannot be saved names its path', async () => {
    const state = underAFile();
    const r = await runCli(['run', '--sim', '--only', 'no-prestop', '--output-dir', join(temp('out'), 'run')], {
      TERMLAB_STATE_DIR: state,
    });
    expect(r.stderr).not.toContain('internal error');
    expect(r).toMatchObject({ code: EXIT.badInput, stderr: expect.stringContaining(`${join(state, 'runs')}`) });
  });

  it('0: reports/latest is a relative link, so the folder still works moved or zipped', async () => {
    const cwd = temp('cwd');
    const r = await runCliIn(cwd, ['run', '--sim', '--scenarios', shortScenario()], isolated());
    expect(r.code, r.stderr).toBe(EXIT.ok);
    const runDir = readdirSync(join(cwd, 'reports')).find((d) => d.startsWith('run-'))!;
    expect(readlinkSync(join(cwd, 'reports', 'latest'))).toBe(runDir);
    renameSync(join(cwd, 'reports'), join(cwd, 'moved'));
    expect(readdirSync(join(cwd, 'moved', 'latest'))).toContain('no-prestop.observation.json');
  });

  it("2: reports/latest that cannot be replaced names its path, after the run's reports are written", async () => {
    const cwd = temp('cwd');
    mkdirSync(join(cwd, 'reports', 'latest'), { recursive: true });
    writeFileSync(join(cwd, 'reports', 'latest', 'keep'), 'a directory, not a link: rename cannot replace it\n');
    const r = await runCliIn(cwd, ['run', '--sim', '--scenarios', shortScenario()], isolated());
    expect(r.stderr).not.toContain('internal error');
    expect(r).toMatchObject({ code: EXIT.badInput, stderr: expect.stringContaining(join(cwd, 'reports', 'latest')) });
    const runDir = readdirSync(join(cwd, 'reports')).find((d) => d.startsWith('run-'));
    expect(readdirSync(join(cwd, 'reports', runDir!))).toContain('no-prestop.observation.json');
  });

  it('1: a pod that never gets Ready ends its scenario with POD_NOT_READY, and the code reaches the exit code', async () => {
    const r = await runCli(
      [
        'run',
        '--sim',
        '--only',
        'no-prestop',
        '--image',
        'termlab/no-such-image:1',
        '--output-dir',
        join(temp('out'), 'run'),
      ],
      isolated(),
    );
    expect(r.stderr).toMatch(/termlab run: no-prestop: POD_NOT_READY: pod \S+ was not Ready/);
    expect(r.code).toBe(EXIT.checksFailed);
  });

  it('3: a cluster that cannot be reached', async () => {
    const dir = temp('kube');
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: gone',
        'clusters: [{ name: gone, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: gone, context: { cluster: gone, user: u } }]',
        '',
      ].join('\n'),
    );
    const r = await runCli(
      ['run', '--kubeconfig', kubeconfig, '--api-patience', '0', '--output-dir', join(dir, 'run')],
      isolated(),
    );
    expect(r.code, r.stderr).toBe(EXIT.clusterUnreachable);
  });

  it("4: a class gradebook with invalid evidence needs the instructor's review; one that cannot be written names its path", async () => {
    const dir = temp('class');
    mkdirSync(join(dir, 'run-a'));
    copyFileSync(
      join(repoRoot, 'reports/examples/evidence-invalid.observation.json'),
      join(dir, 'run-a', 'evidence-invalid.observation.json'),
    );
    const r = await runCli(['grade', join(dir, 'run-a'), '--gradebook', join(dir, 'book.csv')]);
    expect(r.code, r.stderr).toBe(EXIT.needsReview);
    const book = join(underAFile(), 'book.csv');
    const unwritable = await runCli(['grade', join(dir, 'run-a'), '--gradebook', book]);
    expect(unwritable).toMatchObject({ code: EXIT.badInput, stderr: expect.stringContaining(book) });
  });
});

describe('an error that escaped to the CLI', () => {
  it('an AbortError or EPIPE is no API failure; a refused connection or an answer is', () => {
    const abort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(escapedApiFailure(abort)).toBeNull();
    expect(escapedApiFailure(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeNull();
    expect(escapedApiFailure(new Error('a bug'))).toBeNull();
    expect(escapedApiFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toMatchObject(
      { transient: true },
    );
  });
});

describe('a scenario ended early keeps its own code to the exit code', () => {
  // The run phases' own failures (POD_NOT_READY is driven from the CLI above).
  const EARLY_ENDS = [
    'POD_GONE_EARLY',
    'REQUEST_NOT_ACCEPTED',
    'CONTAINER_NOT_ENDED',
    'ROLLOUT_NOT_COMPLETE',
    'LOAD_NOT_ENDED',
  ] as const;

  it.each(EARLY_ENDS)(
    '%s: exit 1 even when every grade passed, and the closing line names the scenario and the code',
    (code) => {
      const failures = [{ scenario: 'short-grace', error: new TermlabError(code, 'what happened') }];
      const exit = gravestExit([EXIT.ok, ...failures.map((f) => exitCodeFor(f.error.code))]);
      expect(exit).toBe(EXIT.checksFailed);
      expect(exitReason(exit, { results: [], pairs: [], problems: [], failures })).toBe(
        `exit 1: short-grace ended early (${code})`,
      );
    },
  );

  it('a container never seen to end fails the terminate phase with CONTAINER_NOT_ENDED, handed to the run with its limit', async () => {
    // A watch that never sees the container end (a kubelet that never killed it), and no read that finds it ended.
    const watch = {
      waitFor: async () => null,
      settle: async () => {},
      read: async () => null,
      gaveUp: false,
      lifecycle: [],
    } as unknown as PodWatch;
    const scenario = ScenarioSchema.parse({
      name: 'stuck',
      mode: 'graceful',
      preStop: { kind: 'exec-sleep', seconds: 2 },
      terminationGracePeriodSeconds: 3,
      workMs: 5000,
      deleteDelayMs: 1000,
    });
    const failures: TermlabError[] = [];
    const clock = new RunClock();
    const ctx = {
      cluster: { health: { patienceMs: 0 } },
      clock,
      signal: new AbortController().signal,
      onPhase: () => {},
      onFailure: (error: TermlabError) => failures.push(error),
    } as unknown as ScenarioContext;
    const run = { complete: false, observedAt: clock.now().wall } as Observation['run'];
    await runPhases(ctx, run, new Cleaner(clock), () => terminatePhase(ctx, scenario, watch));
    expect(failures.map((f) => [f.code, f.context.limitMs])).toEqual([['CONTAINER_NOT_ENDED', 35_000]]);
    expect(run).toMatchObject({ complete: false, incompleteReason: 'the container was not seen to end within 35s' });
  });
});
