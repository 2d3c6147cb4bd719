// The kubelet's reaction time, by its mechanism (cluster/sim/pleg.ts): a DELETE is acted on only
// when the pod worker's syncs have each seen a relist end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as k8s from '@kubernetes/client-node';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { isReady, labPod, terminatedState, watchPod } from '../support/sim.ts';

const RELIST_PERIOD_MS = 400;
let sim: SimCluster;
let core: k8s.CoreV1Api;
let kc: k8s.KubeConfig;
beforeAll(async () => {
  sim = await startSimCluster({ kubelet: { relistPeriodMs: RELIST_PERIOD_MS, relistDurationMs: 0, relistsBeforeKill: 2 } });
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
});
afterAll(async () => { await sim.stop(); });

describe('kubelet reaction time', () => {
  it('kills only after two relists have ended past the DELETE, and writes the exit only after a relist saw it', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: labPod('reacts', { grace: 5 }) });
    const watch = await watchPod(kc, 'default', 'reacts', created.metadata!.resourceVersion);
    await watch.waitFor(isReady, 'ready');
    await core.deleteNamespacedPod({ name: 'reacts', namespace: 'default' });
    await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    watch.stop();
    const truth = sim.truth(created.metadata!.uid!)!;
    // Two relists that each start after the previous point end at least one whole period apart.
    expect(truth.killingAt! - truth.deleteReceivedAt!).toBeGreaterThanOrEqual(RELIST_PERIOD_MS);
    expect(truth.termSentAt!).toBeGreaterThanOrEqual(truth.killingAt!);
    expect(truth.exitSeenAt!).toBeGreaterThan(truth.exitedAt!);
  });
});
