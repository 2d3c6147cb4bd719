// The node's fault matrix (dev/node/faults.ts) on the simulated cluster, on the default transport
// (portforward), shared by test/faults/default-transport-*.test.ts (one file per part, so that the parts
// run beside other files): the lab pair runs side by side on one cluster per case, as `termlab run`
// does; a try whose request the harness lost runs again on a fresh pod (as --retries 1 does); the fault
// strikes when the sim's own ground truth says short-grace's first pod reached its point, not after a sleep.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import type { FaultRequest } from '../../cluster/sim/faults.ts';
import { grade } from '../../harness/grade/grade.ts';
import { connect, listPods, readPod, type Cluster } from '../../harness/kube/index.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { podNameFor, runScenario, type Phase, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

let loaded: Promise<{ template: Record<string, any>; pair: Scenario[] }> | null = null;
const inputs = () =>
  (loaded ??= (async () => ({
    template: await loadTemplate(),
    pair: (await loadScenarioSet(undefined, ['short-grace', 'restored-grace'])).scenarios as Scenario[],
  }))());

export type Point = 'before-kubelet' | 'during-hook' | 'after-term';
/** The moment a point has come, read from the sim kubelet's ground truth for the first pod. */
const reached: Record<Point, (t: { hookStartAt?: number; hookEndAt?: number; termSentAt?: number }) => boolean> = {
  'before-kubelet': () => true,
  'during-hook': (t) => t.hookStartAt !== undefined && t.hookEndAt === undefined,
  'after-term': (t) => t.termSentAt !== undefined,
};

/** termlab run's own default (--ready-timeout 120): eight clusters at once on two cores start pods slowly. */
const READY_TIMEOUT_MS = 120_000;

const sims: SimCluster[] = [];
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop()));
});

export const why = (o: Observation) =>
  JSON.stringify({
    checks: grade(o)
      .checks.filter((c) => c.status !== 'pass')
      .map((c) => `${c.id}: ${c.reason}`),
    transport: o.evidence.transport,
    lifecycle: o.evidence.watchLifecycle,
    request: o.request,
  });

/** The pair on a fresh sim; `fault` strikes once short-grace's first pod reaches `point`. */
export async function runPair(
  runId: string,
  fault: FaultRequest,
  point: Point,
  started: (sim: SimCluster) => void = () => {},
): Promise<{ tries: Map<string, Observation[]>; left: number; struck: boolean; missed: string; sim: SimCluster }> {
  const { template, pair } = await inputs();
  const sim = await startSimCluster();
  sims.push(sim);
  started(sim);
  const cluster: Cluster = await connect({ kubeconfigText: sim.kubeconfig, requestTimeoutMs: 1_000 });
  let struck = false;
  let watching = false;
  let firstTryDone = false;
  let missed = 'the point never came before the try ended';
  const strikeAt = (name: string) => {
    if (watching) return;
    watching = true;
    void (async () => {
      const uid = (await readPod(cluster, 'default', name))?.metadata?.uid;
      if (!uid) {
        missed = `no UID for ${name}`;
        return;
      }
      // The sim's kubelet records each step as it takes it: watch for the point, then strike.
      while (!firstTryDone) {
        const truth: { exitedAt?: number } & Parameters<(typeof reached)[Point]>[0] = sim.truth(uid) ?? {};
        if (reached[point](truth)) {
          sim.fault(fault);
          struck = true;
          return;
        }
        if (truth.exitedAt !== undefined) {
          missed = `the container exited before ${point}: ${JSON.stringify(truth)}`;
          return;
        }
        await sleep(10);
      }
    })().catch((error: unknown) => {
      missed = String(error);
    });
  };
  const context = (scenario: Scenario, attempt: number): ScenarioContext => ({
    cluster,
    namespace: 'default',
    runId,
    owner: 'faults',
    harnessVersion: 'test',
    simulated: true,
    template,
    transport: 'portforward',
    clock: new RunClock(),
    signal: new AbortController().signal,
    readyTimeoutMs: READY_TIMEOUT_MS,
    attempt,
    onPhase: (phase: Phase) => {
      if (phase === 'terminating' && attempt === 1 && scenario.name === 'short-grace')
        strikeAt(podNameFor(scenario, runId));
    },
  });
  const tries = new Map<string, Observation[]>();
  await Promise.all(
    pair.map(async (scenario) => {
      const list: Observation[] = [];
      tries.set(scenario.name, list);
      for (let attempt = 1; attempt <= 2; attempt++) {
        const o = await runScenario(context(scenario, attempt), scenario);
        if (scenario.name === 'short-grace') firstTryDone = true;
        list.push(o);
        if (!grade(o).lostPath) break;
      }
    }),
  );
  const left = (await listPods(cluster, 'default', { labelSelector: `termlab.io/run=${runId}` })).items.length;
  return { tries, left, struck, missed, sim };
}

export function expectHonest(tries: Map<string, Observation[]>): void {
  for (const [scenario, list] of tries) {
    for (const o of list) {
      const result = grade(o);
      expect(
        ['matches-model', 'inconclusive'],
        `${scenario} try ${o.run.attempt ?? 1}: ${result.verdict}: ${why(o)}`,
      ).toContain(result.verdict);
      if (result.verdict === 'inconclusive') expect(result.explanation).not.toBe('');
      expect(
        result.checks.filter((c) => c.status === 'fail'),
        why(o),
      ).toEqual([]);
    }
    const last = list.at(-1)!;
    expect(grade(last).verdict, `${scenario}, last try: ${why(last)}`).toBe('matches-model');
  }
}

/** The API server dead for `seconds` at each of the three points: one file per length, so the lengths run side by side. */
export function describeApiOutage(seconds: number): void {
  describe.concurrent('the lab pair on the default transport while the API server dies', () => {
    it.each((['before-kubelet', 'during-hook', 'after-term'] as const).map((point) => [`${seconds}s`, point] as const))(
      'down %s, %s: every try matches or is inconclusive with its cause; the last matches; no pod left',
      async (label, point) => {
        const { tries, left, struck, missed } = await runPair(
          `run-fd-${label}-${point}`.slice(0, 40),
          { fault: 'refuse-connections', seconds },
          point,
        );
        expect(struck, missed).toBe(true);
        expectHonest(tries);
        // The outage cut short-grace's forward while its request was in flight: lost, and tried again.
        const first = tries.get('short-grace')![0]!;
        expect(
          first.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006),
          why(first),
        ).toBe(true);
        expect(tries.get('short-grace')!.length, why(first)).toBe(2);
        expect(left).toBe(0);
      },
      150_000,
    );
  });
}
