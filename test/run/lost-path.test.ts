// The default transport (port-forward) while the simulated API server dies, or the forward alone
// is reset: the harness loses its own path to the pod. The verdict is the kubelet's or inconclusive
// with the cause and times, never "differs" or "evidence invalid"; nothing is left behind.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { grade } from '../../harness/grade/grade.ts';
import { connect, listPods, type Cluster } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { runScenario, type Phase, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import type { FaultRequest } from '../../cluster/sim/faults.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { repoRoot } from '../support/processes.ts';

let sim: SimCluster;
let cluster: Cluster;
let template: Record<string, any>;
beforeAll(async () => {
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig, requestTimeoutMs: 1_000 });
  template = await loadTemplate();
});
afterAll(async () => {
  await sim.stop();
});

// The lab pair's two halves, shortened: cut by SIGKILL at 3 s, and completed well inside 12 s.
const cut: Scenario = {
  name: 'cut',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 1 },
  terminationGracePeriodSeconds: 3,
  workMs: 9000,
  deleteDelayMs: 500,
};
const completes: Scenario = {
  name: 'completes',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 1 },
  terminationGracePeriodSeconds: 12,
  workMs: 4000,
  deleteDelayMs: 500,
};

function context(runId: string, fault: FaultRequest, at: Phase): ScenarioContext {
  const onPhase = (phase: Phase) => {
    if (phase === at) sim.fault(fault);
  };
  return {
    cluster,
    namespace: 'default',
    runId,
    owner: 'lost-path',
    harnessVersion: 'test',
    simulated: true,
    template,
    transport: 'portforward',
    clock: new RunClock(),
    signal: new AbortController().signal,
    readyTimeoutMs: 20_000,
    onPhase,
  };
}

const why = (o: Observation) =>
  JSON.stringify({
    checks: grade(o)
      .checks.filter((c) => c.status !== 'pass')
      .map((c) => `${c.id}: ${c.reason}`),
    transport: o.evidence.transport,
    lifecycle: o.evidence.watchLifecycle,
    request: o.request,
  });
const runPods = (runId: string) =>
  listPods(cluster, 'default', { labelSelector: `termlab.io/run=${runId}` }).then((l) => l.items.length);

describe('the harness loses its port-forward', () => {
  it.each([
    ['the API server dies for 3 s', { fault: 'refuse-connections', seconds: 3 } as FaultRequest, 'run-lp-0001', cut],
    [
      'the API server dies for 3 s',
      { fault: 'refuse-connections', seconds: 3 } as FaultRequest,
      'run-lp-0002',
      completes,
    ],
    ['the port-forward alone is reset', { fault: 'reset-port-forwards' } as FaultRequest, 'run-lp-0003', cut],
    ['the port-forward alone is reset', { fault: 'reset-port-forwards' } as FaultRequest, 'run-lp-0004', completes],
  ])(
    '%s right after the delete (%s, %s): inconclusive with the cause and times',
    async (_what, fault, runId, scenario) => {
      const o = await runScenario(context(runId, fault, 'terminating'), scenario);
      // The transport's life is on record: a remote close without a close frame.
      expect(
        o.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006),
        why(o),
      ).toBe(true);
      const result = grade(o);
      expect(result.verdict, why(o)).toBe('inconclusive');
      const request = result.checks.find((c) => c.id === 'outcome.request')!;
      // A dead API also cut the log follow; read again after it, a container that ended meanwhile is gone, log and all
      // (kubelet cleanUpContainersInPod), so the server's `aborted` line may be lost: the node's recording says just that.
      const lostLog =
        /^the port-forward's connection \d+ was closed by the remote side with code 1006 at -?\d+\.\d\d s; the API server was unreachable from -?\d+\.\d\d s to \d+\.\d\d s, and the container log is not whole/;
      if (!(fault.fault === 'refuse-connections' && lostLog.test(request.reason))) {
        expect(request.reason).toMatch(
          /^the connection to the pod was lost at -?\d+\.\d\d s, before the preStop hook began \(log line \d+ \(aborted\)/,
        );
        if (fault.fault === 'refuse-connections')
          expect(request.reason).toMatch(/the API server was unreachable from -?\d+\.\d\d s to \d+\.\d\d s/);
      }
      expect(
        result.checks.filter((c) => c.status === 'fail'),
        why(o),
      ).toEqual([]);
      expect(await runPods(runId)).toBe(0);
    },
  );

  it('a reset after the kill cut the request: graded on the kubelet, matches the model', async () => {
    const o = await runScenario(context('run-lp-0005', { fault: 'reset-port-forwards' }, 'collecting'), cut);
    expect(grade(o).verdict, why(o)).toBe('matches-model');
  });

  it('termlab run --retries 1: a try whose port-forward was reset runs again on a fresh pod; both tries kept and shown; the pair from the graded tries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-retry-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    const out = join(dir, 'run');
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'short-grace,restored-grace',
        '--owner',
        'retries',
        '--output-dir',
        out,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '',
      stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    let reset = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
      // Both first tries are terminating: their forwards are reset at once, the API stays healthy.
      if (!reset && (stdout.match(/ terminating\n/g) ?? []).length >= 2) {
        reset = true;
        sim.fault({ fault: 'reset-port-forwards' });
      }
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    expect(code, shown).toBe(0);
    expect(
      readdirSync(out)
        .filter((f) => f.endsWith('.observation.json'))
        .sort(),
    ).toEqual([
      'restored-grace.attempt-2.observation.json',
      'restored-grace.observation.json',
      'short-grace.attempt-2.observation.json',
      'short-grace.observation.json',
    ]);
    expect(stdout, shown).toMatch(/short-grace: try 1 lost its request \(the connection to the pod was lost at/);
    expect(stdout, shown).toMatch(/^short-grace +exec sleep 3s .*↻ request lost, tried again$/m);
    expect(stdout, shown).toMatch(/^short-grace \(try 2\) .*matches the model$/m);
    expect(stdout, shown).toMatch(/lab pair grace: pass/);
    expect(stdout, shown).not.toMatch(/differs from the model|evidence invalid/);
  });
});

describe('a kubelet that reacts late to the delete', () => {
  it('termlab run: a pair half whose own times kept it from testing its design runs again; both tries kept; the pair from the last', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-strayed-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    const out = join(dir, 'run');
    const child = spawn(
      process.execPath,
      [
        join(repoRoot, 'bin', 'termlab.js'),
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'short-grace,restored-grace',
        '--owner',
        'strayed',
        '--output-dir',
        out,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '',
      stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    let paused = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
      // The line comes before the delete is sent: the kubelet is stopped before it can see the deletion,
      // and sees it 8 s late. Its hook (3 s) then ends after the work (9 s after the delete): completed.
      // A restored-grace a second ahead (Ready sooner on a busy machine) is in its hook then: its TERM
      // comes late, it is left open, and runs again too; the pair still passes from the last tries.
      if (!paused && /\] short-grace +deleting\n/.test(stdout)) {
        paused = true;
        sim.fault({ fault: 'pause-kubelet', seconds: 8 });
      }
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    expect(paused, shown).toBe(true);
    expect(code, shown).toBe(0);
    expect(stdout, shown).toMatch(
      /short-grace: try 1 did not test its design: it was completed, as the model predicts from that run's own times, but as written it is cut \(TERM came \d+\.\d\ds after the delete, where the design puts it at \d+\.\d\ds\); running it again on a fresh pod/,
    );
    expect(
      readdirSync(out)
        .filter((f) => f.startsWith('short-grace') && f.endsWith('.observation.json'))
        .sort(),
    ).toEqual(['short-grace.attempt-2.observation.json', 'short-grace.observation.json']);
    expect(stdout, shown).toMatch(/^short-grace +exec sleep 3s .*↻ did not test its design, tried again$/m);
    // The reports say the same of that try: why it ran again, and which file counts instead.
    for (const report of ['report.md', 'report.html']) {
      const page = readFileSync(join(out, report), 'utf8');
      expect(page, report).toContain('↻ did not test its design, tried again');
      expect(page, report).toMatch(
        /did not test its design: it was completed, as the model predicts from that run(?:'|&#39;)s own times, but as written it is cut \(TERM came [^;]*; the next try counts instead \([^)]*short-grace\.attempt-2\.observation\.json\)/,
      );
    }
    expect(stdout, shown).toMatch(/^short-grace \(try 2\) .*matches the model$/m);
    expect(stdout, shown).toMatch(/lab pair grace: pass/);
    expect(stdout, shown).not.toMatch(/differs from the model|evidence invalid/);
  }, 120_000);
});
