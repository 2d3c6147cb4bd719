// The runner while the simulated API server is away or stalled and its kubelet carries on:
// the same verdict as without the fault, the gap recorded and read across, nothing left behind.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { grade } from '../../harness/grade/grade.ts';
import { connect, listPods, readPod, type Cluster } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { runScenario, type Phase, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

let sim: SimCluster;
let cluster: Cluster;
let template: Record<string, any>;
let dir: string;
beforeAll(async () => {
  sim = await startSimCluster();
  // A short request limit, so that a stalled API shows as timeouts within the test.
  cluster = await connect({ kubeconfigText: sim.kubeconfig, requestTimeoutMs: 1_000 });
  template = await loadTemplate();
  dir = mkdtempSync(join(tmpdir(), 'termlab-outage-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim.stop();
});

// Cut by SIGKILL with whole seconds of margin either side, as in faults.test.ts.
// The work ends well past the kill and the kubelet's reaction window after it (theory.ts), so the model's call is clear.
const cutScenario: Scenario = {
  name: 'cut',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 1 },
  terminationGracePeriodSeconds: 2,
  workMs: 9000,
  deleteDelayMs: 500,
};

// For a stream cut by a refused API: its log must still exist when the harness is back, and the kubelet
// removes a deleted pod's dead container within a relist (≤1 s) of the kill. The harness's tries, jittered as
// client-go's (0.8 s doubling, jitter 1.0), come at 0, [0.8, 1.6) and [2.4, 4.8) s after the cut, so with a
// 1.5 s outage it is back by 4.8 s at the latest; the TERM (no preStop) falls inside the outage, and the kill,
// 8 s after the delete, comes seconds after that. With a 3 s outage a third try could land before its end and
// the fourth at up to 11.2 s, past the container's removal: the log lost by chance (a CI flake of 2026-12-07).
const OUTAGE_SECONDS = 1.5;
const outageScenario: Scenario = {
  name: 'cut',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 8,
  workMs: 12_000,
  deleteDelayMs: 500,
};

function context(runId: string, onPhase: (phase: Phase) => void): ScenarioContext {
  return {
    cluster,
    namespace: 'default',
    runId,
    owner: 'outage',
    harnessVersion: 'test',
    simulated: true,
    template,
    transport: 'direct',
    clock: new RunClock(),
    signal: new AbortController().signal,
    readyTimeoutMs: 20_000,
    onPhase,
  };
}

/** What a failed verdict assertion shows: the checks that did not pass, and the watch's life. */
const why = (o: Observation) =>
  JSON.stringify({
    checks: grade(o)
      .checks.filter((c) => c.status !== 'pass')
      .map((c) => `${c.id}: ${c.reason}`),
    lifecycle: o.evidence.watchLifecycle,
    request: o.request,
  });

const runPods = (runId: string) =>
  listPods(cluster, 'default', { labelSelector: `termlab.io/run=${runId}` }).then((l) => l.items.length);

describe('the API away while the kubelet carries on', () => {
  it('refused connections during terminating: backoff, a pod read after the gap, the same verdict, nothing left', async () => {
    const o = await runScenario(
      context('run-o-0001', (phase) => {
        if (phase === 'terminating') sim.fault({ fault: 'refuse-connections', seconds: OUTAGE_SECONDS });
      }),
      outageScenario,
    );
    const lifecycle = o.evidence.watchLifecycle;
    expect(lifecycle.map((l) => l.event)).toEqual(['connected', 'dropped', 'resumed']);
    // Not a storm of immediate reconnects: a few tries spread over the outage.
    expect(lifecycle[2]!.detail).toMatch(/^\d+ tries over \d+\.\ds$/);
    expect(o.evidence.podReads.map((r) => r.reason)).toEqual(expect.arrayContaining(['watch-resumed', 'final']));
    expect(o.evidence.podReads.find((r) => r.reason === 'watch-resumed')?.uid).toBe(o.pod?.uid);
    // The log stream the outage cut is followed again: the TERM written during the outage is there.
    expect(o.timeline.termReceived).not.toBeNull();
    expect(o.evidence.logEndedEarly).toBe(false);
    expect(o.run.complete).toBe(true);
    expect(grade(o).verdict, why(o)).toBe('matches-model');
    expect(await runPods('run-o-0001')).toBe(0);
  });

  it('a stalled API: a call times out and is tried again until the API answers', async () => {
    const failures: string[] = [];
    sim.fault({ fault: 'stall-requests', seconds: 3 });
    const pod = await readPod(cluster, 'default', 'no-such-pod', { onTransientFailure: (f) => failures.push(f.text) });
    expect(pod).toBeNull();
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.every((f) => /timed out/.test(f))).toBe(true);
  });

  it('a stalled API during terminating: the final read waits it out, the same verdict', async () => {
    const o = await runScenario(
      context('run-o-0002', (phase) => {
        if (phase === 'terminating') sim.fault({ fault: 'stall-requests', seconds: 3 });
      }),
      cutScenario,
    );
    expect(o.evidence.podReads.find((r) => r.reason === 'final')?.containers[0], why(o)).toMatchObject({
      state: 'terminated',
      exitCode: 137,
    });
    expect(o.run.complete).toBe(true);
    expect(grade(o).verdict, why(o)).toBe('matches-model');
    expect(await runPods('run-o-0002')).toBe(0);
  });
});

describe('a create whose answer is lost', () => {
  it('reads the pod back and, though it is Ready by then, still sees it Ready and grades the run', async () => {
    // The default request limit: the held answer ends when the connection is cut at Ready, not by a timeout.
    const patient = await connect({ kubeconfigText: sim.kubeconfig });
    await sim.fault({ fault: 'lose-next-create-answer', namespace: 'default' });
    const o = await runScenario({ ...context('run-o-0005', () => {}), cluster: patient }, cutScenario);
    expect(o.run.complete, o.run.incompleteReason ?? '').toBe(true);
    // The create was tried again and found the pod: its watch began with the pod as it was (ADDED, Ready).
    expect(o.evidence.watchEvents[0]).toMatchObject({ type: 'ADDED' });
    expect(grade(o).verdict, why(o)).toBe('matches-model');
    expect(await runPods('run-o-0005')).toBe(0);
  });
});

describe('termlab run against an API that goes away', () => {
  it('says the API is away and back, and exits as without the fault, or inconclusive for the log it lost', async () => {
    const r = await runUntilTerminating(['--only', 'short-grace', '--owner', 'brief'], () =>
      sim.fault({ fault: 'refuse-connections', seconds: 6 }),
    );
    // The dead API cut the log follow too; a container that ended before the read again is gone, log and all
    // (as on the node: "unable to retrieve container logs"), and then the exit code alone cannot say why: inconclusive.
    if (r.code === 1)
      expect(r.stdout, r.stdout + r.stderr).toMatch(
        /inconclusive\n {2}short-grace: 137 not explained by the grace period: no TERM or hook was seen in the container log/,
      );
    else expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/API unreachable for \d+ s, still waiting/);
    expect(r.stdout).toMatch(/API reachable again after \d+\.\d s/);
    expect(
      await listPods(cluster, 'default', { labelSelector: 'termlab.io/owner=brief' }).then((l) => l.items.length),
    ).toBe(0);
  });

  it('past --api-patience: exit 3, one line naming the pods left; the next reap removes them, finalizer and all', async () => {
    const state = { TERMLAB_STATE_DIR: join(dir, 'state') };
    const r = await runUntilTerminating(
      ['--only', 'short-grace', '--owner', 'patient', '--api-patience', '2'],
      () => sim.fault({ fault: 'refuse-connections', seconds: 8 }),
      state,
    );
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /the API of context "termlab-sim" .* stayed unreachable past --api-patience 2s; pods left in default: tl-short-grace-\w{4}; run run-\S+ stays unfinished/,
    );
    // The API comes back; the pod is still held by its finalizer until reap.
    await expect
      .poll(
        () =>
          listPods(cluster, 'default', { labelSelector: 'termlab.io/owner=patient' }).then((l) =>
            l.items.map((p) => p.metadata?.finalizers ?? []),
          ),
        { timeout: 20_000 },
      )
      .toEqual([['termlab.io/hold']]);
    const reaped = await runCli(['reap', '--kubeconfig', join(dir, 'kubeconfig'), '--owner', 'patient'], state);
    expect(reaped.code, reaped.stdout + reaped.stderr).toBe(0);
    expect(reaped.stdout, reaped.stdout).toMatch(/1 deleted/);
    await expect
      .poll(
        () => listPods(cluster, 'default', { labelSelector: 'termlab.io/owner=patient' }).then((l) => l.items.length),
        { timeout: 15_000 },
      )
      .toBe(0);
  });
});

/** A real `termlab run` process; `fault` is applied when a scenario reaches terminating. */
function runUntilTerminating(
  args: string[],
  fault: () => void,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--transport',
        'direct',
        '--output-dir',
        mkdtempSync(join(dir, 'run-')),
        ...args,
      ],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let faulted = false;
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
      if (!faulted && /\bterminating\b/.test(stdout)) {
        faulted = true;
        fault();
      }
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
