// End to end on the simulated cluster: the rollout scenarios run by the harness, written, read back
// and graded offline, and the attribution held against the sim's own record of every connection
// its service proxy took (ground truth the harness never sees).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { gradeFile } from '../../harness/grade/files.ts';
import { connect } from '../../harness/kube/index.ts';
import { writeAnyObservation } from '../../harness/observation/write.ts';
import type { RolloutObservation } from '../../harness/observation/rollout.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { rolloutNameFor, runRollout } from '../../harness/run/rollout.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';
import type { RolloutScenario } from '../../harness/scenario/rollout.ts';

const RUN_ID = 'run-test-rollout-e2e1';

let sim: SimCluster;
let scenarios: RolloutScenario[];
const dir = mkdtempSync(join(tmpdir(), 'termlab-rollout-'));

beforeAll(async () => {
  // The defaults, as the real node measured them: an idle pod worker kills at once, and kube-proxy's
  // bounded-frequency syncs leave an old pod routed for up to a second after the new pod's readiness.
  sim = await startSimCluster();
  const set = await loadScenarioSet('manifests/rollout.yaml', [
    'rollout-adds-prestop',
    'rollout-with-prestop',
    'rollout-immediate',
  ]);
  if (set.kind !== 'rollout') throw new Error('not a rollout file');
  scenarios = set.scenarios;
});
afterAll(async () => {
  await sim?.stop();
});

async function run(name: string): Promise<{ observation: RolloutObservation; path: string }> {
  const cluster = await connect({ kubeconfigText: sim.kubeconfig });
  const observation = await runRollout(
    {
      cluster,
      namespace: 'default',
      runId: RUN_ID,
      owner: 'test',
      harnessVersion: 'test',
      simulated: true,
      template: await loadTemplate(),
      transport: 'direct',
      clock: new RunClock(),
      signal: new AbortController().signal,
      readyTimeoutMs: 60_000,
      onPhase: () => {},
    },
    scenarios.find((s) => s.name === name)!,
  );
  const path = join(dir, `${name}.observation.json`);
  await writeAnyObservation(path, observation);
  return { observation, path };
}

describe('rollouts on the simulated cluster', () => {
  it('rollout-adds-prestop: requests fail at old pods whose live lifecycle had no hook while the template had one', async () => {
    const { observation, path } = await run('rollout-adds-prestop');
    expect(observation.run.complete, observation.run.incompleteReason).toBe(true);
    const r = await gradeFile(path);
    const ro = r.rollout!;
    expect(ro.templateAfter).toBe('preStop exec 5s');
    const old = ro.pods.filter((p) => p.revision === 'old');
    expect(old).toHaveLength(3);
    expect(old.every((p) => p.live === 'no preStop hook')).toBe(true);
    expect(ro.requests.oldFailed).toBeGreaterThan(0);
    expect(r.checks.filter((c) => c.id.startsWith('evidence.')).map((c) => [c.id, c.status])).toEqual(
      r.checks.filter((c) => c.id.startsWith('evidence.')).map((c) => [c.id, 'pass']),
    );
    expect(r.checks.find((c) => c.id === 'rollout.model')!.status).toBe('pass');
    // Ground truth: every connection the proxy could not deliver after the change went to an old pod.
    const truth = (await sim.proxyTruth('default', rolloutNameFor(scenarios[0]!, RUN_ID)))!;
    const changed = Date.parse(observation.timeline.templateChanged!.wall);
    const oldUids = new Set(old.map((p) => p.uid));
    const lost = truth.connections.filter((c) => c.at >= changed && c.result !== 'routed');
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.filter((c) => c.podUid !== null).every((c) => oldUids.has(c.podUid!))).toBe(true);
    // Regraded from the file alone: the same verdict.
    expect((await gradeFile(path)).verdict).toBe(r.verdict);
  });

  it('rollout-with-prestop: the old pods ran the hook, and no request fails during the rollout', async () => {
    const { observation, path } = await run('rollout-with-prestop');
    expect(observation.run.complete, observation.run.incompleteReason).toBe(true);
    const r = await gradeFile(path);
    const ro = r.rollout!;
    expect(ro.pods.filter((p) => p.revision === 'old').every((p) => p.live === 'preStop exec 5s')).toBe(true);
    expect(r.checks.find((c) => c.id === 'rollout.model')).toMatchObject({ status: 'pass' });
    expect(ro.requests.oldFailed).toBe(0);
    expect(Object.keys(ro.causes).filter((c) => c !== 'before the change')).toEqual([]);
    expect((await gradeFile(path)).verdict).toBe(r.verdict);
  });

  it('rollout-immediate: every old pod cuts the requests it has in flight at its TERM', async () => {
    const { observation, path } = await run('rollout-immediate');
    expect(observation.run.complete, observation.run.incompleteReason).toBe(true);
    const r = await gradeFile(path);
    const old = r.rollout!.pods.filter((p) => p.revision === 'old');
    expect(old.every((p) => p.failed > 0 && p.exitCode === 17)).toBe(true);
    expect(r.rollout!.causes['cut at TERM']).toBeGreaterThan(0);
    expect(r.checks.find((c) => c.id === 'rollout.model')).toMatchObject({ status: 'pass' });
    expect(r.verdict).toBe('matches-model');
  });
});
