// The runner under faults, in-process against the simulated cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { grade } from '../../harness/grade/grade.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { podNameFor, runScenario, type Phase, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

let sim: SimCluster;
let cluster: Cluster;
let template: Record<string, any>;
beforeAll(async () => {
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  template = await loadTemplate();
});
afterAll(async () => {
  await sim.stop();
});

// The work ends well past the kill and the kubelet's reaction window after it (theory.ts), so the model's call is clear.
const cutScenario: Scenario = {
  name: 'cut',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 1 },
  terminationGracePeriodSeconds: 2,
  workMs: 9000,
  deleteDelayMs: 500,
};
const completeScenario: Scenario = { ...cutScenario, name: 'complete', terminationGracePeriodSeconds: 8, workMs: 2500 };

function context(
  runId: string,
  onPhase: (phase: Phase) => void = () => {},
  signal = new AbortController().signal,
): ScenarioContext {
  return {
    cluster,
    namespace: 'default',
    runId,
    owner: 'tester',
    harnessVersion: 'test',
    simulated: true,
    template,
    transport: 'portforward',
    clock: new RunClock(),
    signal,
    readyTimeoutMs: 20_000,
    onPhase,
  };
}

describe('runner resilience', () => {
  it('resumes a watch dropped mid-run and still grades as the model predicts', async () => {
    const o = await runScenario(
      context('run-t-0001', (phase) => {
        if (phase === 'terminating') sim.fault({ fault: 'drop-watches' });
      }),
      cutScenario,
    );
    expect(o.evidence.watchLifecycle.map((l) => l.event)).toEqual(
      expect.arrayContaining(['connected', 'dropped', 'resumed']),
    );
    expect(grade(o).verdict).toBe('matches-model');
  });

  it('lists again after a 410 and marks the gap', async () => {
    const o = await runScenario(
      context('run-t-0002', (phase) => {
        if (phase === 'terminating') {
          sim.fault({ fault: 'expire-next-watch' });
          sim.fault({ fault: 'drop-watches' });
        }
      }),
      completeScenario,
    );
    const lifecycle = o.evidence.watchLifecycle.map((l) => l.event);
    expect(lifecycle).toContain('expired-relisted');
    expect(o.finalState?.exitCode).toBe(0);
    const result = grade(o);
    expect(result.verdict).toBe('matches-model');
    expect(result.checks.find((c) => c.id === 'evidence.run-complete')?.reason).toContain('resumed');
  });

  it('sends the request straight to the pod IP with --transport direct', async () => {
    const o = await runScenario({ ...context('run-t-0006'), transport: 'direct' }, cutScenario);
    expect(o.run.transport).toBe('direct');
    expect(o.request.outcome).toBe('cut');
    const graded = grade(o);
    expect(graded.verdict, JSON.stringify(graded.checks.filter((c) => c.status !== 'pass'))).toBe('matches-model');
  });

  it('tries a failed delete again and records the failure', async () => {
    sim.fault({ fault: 'fail-next-delete', namespace: 'default', name: podNameFor(cutScenario, 'run-t-0003') });
    const o = await runScenario(context('run-t-0003'), cutScenario);
    expect(o.cleanup[0]).toMatchObject({
      action: 'delete attempt 1',
      ok: false,
      error: expect.stringContaining('500'),
    });
    expect(o.run.complete).toBe(true);
    expect(grade(o).verdict).toBe('matches-model');
  });

  it('reports a pod that never becomes ready, with its events, and leaves nothing behind', async () => {
    const o = await runScenario({ ...context('run-t-0004'), image: 'example.org/nowhere:1' }, completeScenario);
    expect(o.run.complete).toBe(false);
    expect(o.run.incompleteReason).toMatch(/not Ready.*ErrImagePull.*example\.org\/nowhere:1/);
    expect(o.evidence.podEvents.some((e) => e.type === 'Warning')).toBe(true);
    expect(grade(o).verdict).not.toBe('matches-model');
    const left = await cluster.core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'termlab.io/run=run-t-0004',
    });
    expect(left.items).toEqual([]);
  });

  it('on abort stops cleanly: finalizer removed, pod deleted, observation marked incomplete', async () => {
    const abort = new AbortController();
    const o = await runScenario(
      context(
        'run-t-0005',
        (phase) => {
          if (phase === 'request in flight') abort.abort();
        },
        abort.signal,
      ),
      completeScenario,
    );
    expect(o.run.complete).toBe(false);
    expect(o.run.incompleteReason).toBe('interrupted (Ctrl-C) while request in flight');
    expect(o.cleanup.map((c) => [c.action, c.ok])).toEqual([
      ['remove finalizer termlab.io/hold', true],
      ['delete pod', true],
    ]);
    const left = () =>
      cluster.core
        .listNamespacedPod({ namespace: 'default', labelSelector: 'termlab.io/run=run-t-0005' })
        .then((l) => l.items.length);
    await expect.poll(left, { timeout: 15_000 }).toBe(0);
  });
});
