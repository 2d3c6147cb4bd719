// The node's fault matrix (cluster/node/faults.ts) on the simulated cluster, on the default
// transport (portforward): the API server dies for 3 s and for 20 s at three points — right after
// the delete was answered, while the hook runs, after TERM — and the port-forward streams alone are
// reset (the API healthy). The lab pair runs side by side on one cluster per case, as `termlab run`
// does; a try whose request the harness lost runs again on a fresh pod (as --retries 1 does). Every
// try matches the model or is inconclusive with its cause; never differs, never evidence invalid;
// the last try matches; nothing is left. Each point is the sim's own ground truth, not a sleep.
// And the node's kubelet-paused-5s: the kubelet stopped 5 s inside the hook, graded as on the node.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import type { FaultRequest } from '../../cluster/sim/faults.ts';
import { grade } from '../../harness/grade/grade.ts';
import { connect, listPods, readPod, type Cluster } from '../../harness/kube/index.ts';
import type { Observation } from '../../harness/observation.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { podNameFor, runScenario, type Phase, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

let template: Record<string, any>;
let pair: Scenario[];
beforeAll(async () => {
  template = await loadTemplate();
  pair = (await loadScenarioSet(undefined, ['short-grace', 'restored-grace'])).scenarios as Scenario[];
});

type Point = 'before-kubelet' | 'during-hook' | 'after-term';
/** The moment a point has come, read from the sim kubelet's ground truth for the first pod. */
const reached: Record<Point, (t: { hookStartAt?: number; hookEndAt?: number; termSentAt?: number }) => boolean> = {
  'before-kubelet': () => true,
  'during-hook': (t) => t.hookStartAt !== undefined && t.hookEndAt === undefined,
  'after-term': (t) => t.termSentAt !== undefined,
};

/** termlab run's own default (--ready-timeout 120): eight clusters at once on two cores start pods slowly. */
const READY_TIMEOUT_MS = 120_000;

const sims: SimCluster[] = [];
afterAll(async () => { await Promise.all(sims.map((s) => s.stop())); });

const why = (o: Observation) => JSON.stringify({ checks: grade(o).checks.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.reason}`), transport: o.evidence.transport, lifecycle: o.evidence.watchLifecycle, request: o.request });

/** The pair on a fresh sim; `fault` strikes once short-grace's first pod reaches `point`. */
async function runPair(runId: string, fault: FaultRequest, point: Point, started: (sim: SimCluster) => void = () => {}): Promise<{ tries: Map<string, Observation[]>; left: number; struck: boolean; missed: string; sim: SimCluster }> {
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
      if (!uid) { missed = `no UID for ${name}`; return; }
      // The sim's kubelet records each step as it takes it: watch for the point, then strike.
      while (!firstTryDone) {
        const truth: { exitedAt?: number } & Parameters<(typeof reached)[Point]>[0] = sim.truth(uid) ?? {};
        if (reached[point](truth)) { sim.fault(fault); struck = true; return; }
        if (truth.exitedAt !== undefined) { missed = `the container exited before ${point}: ${JSON.stringify(truth)}`; return; }
        await sleep(10);
      }
    })().catch((error: unknown) => { missed = String(error); });
  };
  const context = (scenario: Scenario, attempt: number): ScenarioContext => ({
    cluster, namespace: 'default', runId, owner: 'faults', harnessVersion: 'test', simulated: true, template, transport: 'portforward',
    clock: new RunClock(), signal: new AbortController().signal, readyTimeoutMs: READY_TIMEOUT_MS, attempt,
    onPhase: (phase: Phase) => { if (phase === 'terminating' && attempt === 1 && scenario.name === 'short-grace') strikeAt(podNameFor(scenario, runId)); },
  });
  const tries = new Map<string, Observation[]>();
  await Promise.all(pair.map(async (scenario) => {
    const list: Observation[] = [];
    tries.set(scenario.name, list);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const o = await runScenario(context(scenario, attempt), scenario);
      if (scenario.name === 'short-grace') firstTryDone = true;
      list.push(o);
      if (!grade(o).lostPath) break;
    }
  }));
  const left = (await listPods(cluster, 'default', { labelSelector: `termlab.io/run=${runId}` })).items.length;
  return { tries, left, struck, missed, sim };
}

function expectHonest(tries: Map<string, Observation[]>): void {
  for (const [scenario, list] of tries) {
    for (const o of list) {
      const result = grade(o);
      expect(['matches-model', 'inconclusive'], `${scenario} try ${o.run.attempt ?? 1}: ${result.verdict}: ${why(o)}`).toContain(result.verdict);
      if (result.verdict === 'inconclusive') expect(result.explanation).not.toBe('');
      expect(result.checks.filter((c) => c.status === 'fail'), why(o)).toEqual([]);
    }
    const last = list.at(-1)!;
    expect(grade(last).verdict, `${scenario}, last try: ${why(last)}`).toBe('matches-model');
  }
}

describe.concurrent('the lab pair on the default transport while the API server dies', () => {
  it.each([
    ['3s', 'before-kubelet', 3], ['3s', 'during-hook', 3], ['3s', 'after-term', 3],
    ['20s', 'before-kubelet', 20], ['20s', 'during-hook', 20], ['20s', 'after-term', 20],
  ] as const)('down %s, %s: every try matches or is inconclusive with its cause; the last matches; no pod left', async (label, point, seconds) => {
    const { tries, left, struck, missed } = await runPair(`run-fd-${label}-${point}`.slice(0, 40), { fault: 'refuse-connections', seconds }, point);
    expect(struck, missed).toBe(true);
    expectHonest(tries);
    // The outage cut short-grace's forward while its request was in flight: lost, and tried again.
    const first = tries.get('short-grace')![0]!;
    expect(first.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006), why(first)).toBe(true);
    expect(tries.get('short-grace')!.length, why(first)).toBe(2);
    expect(left).toBe(0);
  }, 150_000);
});

describe.concurrent('the lab pair on the default transport while the kubelet is stopped', () => {
  // cluster/node/faults.ts kubelet-paused-5s: SIGSTOP 2 s into terminating (the hook starts about then), SIGCONT 5 s later.
  it('paused 5 s inside the hook: the path held, so it is graded on the kubelet (matches, inconclusive with its cause, or differs naming its lateness), never a lost path or invalid; one try each', async () => {
    let resumedAt = Number.POSITIVE_INFINITY;
    const { tries, left, struck, missed, sim } = await runPair('run-fk-paused', { fault: 'pause-kubelet', seconds: 5 }, 'during-hook', (s) => s.kubeletPause.once('resumed', () => { resumedAt = performance.timeOrigin + performance.now(); }));
    expect(struck, missed).toBe(true);
    for (const [scenario, list] of tries) {
      expect(list.length, `${scenario}: ${why(list[0]!)}`).toBe(1);
      const o = list[0]!;
      const result = grade(o);
      // The node suite's rule for a kubelet fault (dishonest() in cluster/node/faults.ts).
      const honest = result.verdict === 'matches-model' || (result.verdict === 'inconclusive' && result.explanation.trim() !== '')
        || (result.verdict === 'differs-from-model' && /the kubelet was late/.test(result.explanation));
      expect(honest, `${scenario}: ${result.verdict}: ${result.explanation} ${why(o)}`).toBe(true);
      expect(result.lostPath ?? null, why(o)).toBeNull();
      expect(result.checks.filter((c) => c.status === 'fail' && c.id.startsWith('evidence.')), why(o)).toEqual([]);
      // As on the node: the watch and the forward held; nothing was cut by the remote side.
      expect(o.evidence.watchLifecycle.map((l) => l.event)).toEqual(['connected']);
      expect(o.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006), why(o)).toBe(false);
    }
    // As on the node: the hook ended inside the pause, but its log line (the kubelet serves logs) and TERM came only once the kubelet ran.
    const short = tries.get('short-grace')![0]!;
    const truth = sim.truth(short.pod!.uid!)!;
    const hookEnd = short.evidence.logLines.find((l) => l.text.includes('"event":"hook-end"'));
    expect(truth.hookEndAt!, why(short)).toBeLessThan(resumedAt);
    expect(truth.termSentAt!).toBeGreaterThanOrEqual(resumedAt);
    expect(Date.parse(hookEnd!.receivedAt.wall), why(short)).toBeGreaterThanOrEqual(Math.floor(resumedAt));
    expect(left).toBe(0);
  }, 120_000);
});

describe.concurrent('the lab pair on the default transport while its port-forward streams alone are reset', () => {
  it.each(['during-hook', 'after-term'] as const)('reset %s: the watch untouched, the lost try inconclusive, the retry matches', async (point) => {
    const { tries, left, struck, missed } = await runPair(`run-fr-${point}`, { fault: 'reset-port-forwards' }, point);
    expect(struck, missed).toBe(true);
    expectHonest(tries);
    const first = tries.get('short-grace')![0]!;
    // The API stayed up: the watch never dropped.
    expect(first.evidence.watchLifecycle.map((l) => l.event)).toEqual(['connected']);
    expect(left).toBe(0);
  }, 90_000);
});
