// The kubelet's reaction time, by its mechanism (cluster/sim/pleg.ts): a DELETE is acted on only
// when the pod worker's syncs have each seen a relist end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as k8s from '@kubernetes/client-node';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { request } from 'undici';
import { readLines } from '../support/labServer.ts';
import { isReady, labPod, terminatedState, watchPod, forwardTo } from '../support/sim.ts';

const RELIST_PERIOD_MS = 400;
const SLOW_RELIST_PERIOD_MS = 3000;
let sim: SimCluster;
let core: k8s.CoreV1Api;
let kc: k8s.KubeConfig;
beforeAll(async () => {
  sim = await startSimCluster({ kubelet: { relistPeriodMs: RELIST_PERIOD_MS, relistDurationMs: 0 } });
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
});
afterAll(async () => {
  await sim.stop();
});

describe('kubelet reaction time', () => {
  it("kills a pod whose sync is in flight only after that sync's relist and one more", async () => {
    // Relists long enough that the probe's sync, queued as the pod turns Ready, still waits for its
    // relist when the DELETE arrives, even on a loaded machine (with 400 ms a slow client can miss it).
    const slow = await startSimCluster({ kubelet: { relistPeriodMs: SLOW_RELIST_PERIOD_MS, relistDurationMs: 0 } });
    try {
      const slowKc = new k8s.KubeConfig();
      slowKc.loadFromString(slow.kubeconfig);
      const slowCore = slowKc.makeApiClient(k8s.CoreV1Api);
      const created = await slowCore.createNamespacedPod({
        namespace: 'default',
        body: labPod('reacts', { grace: 5 }),
      });
      const watch = await watchPod(slowKc, 'default', 'reacts', created.metadata!.resourceVersion);
      await watch.waitFor(isReady, 'ready');
      await slowCore.deleteNamespacedPod({ name: 'reacts', namespace: 'default' });
      await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
      watch.stop();
      const truth = slow.truth(created.metadata!.uid!)!;
      // The DELETE cancels the sync in flight, but it still waits for its relist, and the terminating
      // sync waits for a relist that starts after it: at least a whole period.
      expect(truth.killingAt! - truth.deleteReceivedAt!).toBeGreaterThanOrEqual(SLOW_RELIST_PERIOD_MS);
      expect(truth.termSentAt!).toBeGreaterThanOrEqual(truth.killingAt!);
    } finally {
      await slow.stop();
    }
  });

  it('writes an exit of its own only once a relist has seen it', async () => {
    const body = labPod('exits', { command: ['sleep', '0.2'], readinessProbe: undefined, ports: [] });
    const created = await core.createNamespacedPod({ namespace: 'default', body });
    const watch = await watchPod(kc, 'default', 'exits', created.metadata!.resourceVersion);
    const terminated = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    watch.stop();
    expect(terminatedState(terminated)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const truth = sim.truth(created.metadata!.uid!)!;
    expect(truth.exitSeenAt!).toBeGreaterThan(truth.exitedAt!);
    expect(truth.killingAt).toBeUndefined();
  });

  it('records Unhealthy for each readiness probe that fails while the server drains, as the prober does', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: labPod('drains', { grace: 20 }) });
    const watch = await watchPod(kc, 'default', 'drains', created.metadata!.resourceVersion);
    await watch.waitFor(isReady, 'ready');
    const forward = await forwardTo(kc, 'default', 'drains', 8080);
    const res = await request(`http://127.0.0.1:${forward.localPort}/work?ms=4000`);
    const body = readLines(res.body);
    await core.deleteNamespacedPod({ name: 'drains', namespace: 'default' });
    await watch.waitFor(
      (e) => e.pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False') ?? false,
      'not ready while draining',
    );
    expect((await body).error).toBeNull();
    await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    watch.stop();
    await forward.close();
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=drains',
    });
    const unhealthy = events.items.filter((e) => e.reason === 'Unhealthy');
    expect(unhealthy.length).toBeGreaterThan(0);
    expect(unhealthy[0]).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(/^Readiness probe failed: /),
    });
  });
});
