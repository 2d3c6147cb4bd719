// The end of a run sweeps its own pods whatever else fails, and asks for Deployments and Services
// only when the run made them (rollouts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { HOLD_FINALIZER, ownershipLabels } from '../../harness/safety/labels.ts';
import { sweepRun } from '../../harness/safety/sweep.ts';
import { labPod } from '../support/sim.ts';

let sim: SimCluster;
let cluster: Cluster;
/** The same cluster, except that the calls on Deployments and Services (through `server`) reach nothing. */
let noWorkloadApi: Cluster;

beforeAll(async () => {
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig, apiPatienceMs: 0 });
  noWorkloadApi = { ...cluster, server: 'https://127.0.0.1:1' };
});
afterAll(async () => {
  await sim?.stop();
});

async function runPods(runId: string, names: string[]) {
  for (const name of names) {
    const body = labPod(name, { finalizers: [HOLD_FINALIZER] });
    body.metadata!.labels = ownershipLabels('sweeper', runId, 's');
    await cluster.core.createNamespacedPod({ namespace: 'default', body });
  }
}
const podsOf = async (runId: string) =>
  (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: `termlab.io/run=${runId}` })).items;

describe('sweepRun', () => {
  it('releases and deletes every pod of the run even when the Deployments and Services cannot be listed, then reports that failure', async () => {
    await runPods('run-sweep-0001', ['sw-1', 'sw-2']);
    await expect(sweepRun(noWorkloadApi, 'default', 'run-sweep-0001', { workloads: true })).rejects.toThrow(
      /127\.0\.0\.1:1|ECONNREFUSED/,
    );
    // Both were released and deleted before the failure was thrown.
    for (const pod of await podsOf('run-sweep-0001')) {
      expect(pod.metadata?.deletionTimestamp).toBeTruthy();
      expect(pod.metadata?.finalizers ?? []).not.toContain(HOLD_FINALIZER);
    }
    await expect.poll(async () => (await podsOf('run-sweep-0001')).length, { timeout: 20_000 }).toBe(0);
  });

  it('does not ask for Deployments and Services in a run of pod scenarios', async () => {
    await runPods('run-sweep-0002', ['sw-3']);
    // Any call on workloads would fail here: the sweep succeeds, so it made none.
    expect(await sweepRun(noWorkloadApi, 'default', 'run-sweep-0002', { workloads: false })).toBe(true);
    expect(await podsOf('run-sweep-0002')).toEqual([]);
  });
});
