// The service proxy's default timing is kube-proxy's BoundedFrequencyRunner: a sync at once after a
// quiet spell, otherwise not before minSyncPeriod has passed since the last sync ended. A sync takes
// the slices as they are when it starts, so a state that lasts less than a period may never be in
// the view (a deleted pod's replacement can turn ready before the next sync): the test waits for the
// slices' last state, never for a state in between.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../cluster/sim/endpointslice-controller.ts';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { ServiceProxy } from '../../cluster/sim/service-proxy.ts';
import { type KubeObject, Store } from '../../cluster/sim/store.ts';
import { labDeployment, nodePortService, watchAll } from '../support/sim-apps.ts';

const MIN_SYNC_PERIOD_MS = 600;
const SYNC_DURATION_MS = 30;
const ns = 'default';
let sim: SimCluster;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  sim = await startSimCluster({ proxy: { minSyncPeriodMs: MIN_SYNC_PERIOD_MS, syncDurationMs: SYNC_DURATION_MS } });
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
});

type Slice = { object: k8s.V1EndpointSlice };
const uidsIn = (e: Slice, keep: (c: k8s.V1EndpointConditions) => boolean) =>
  (e.object.endpoints ?? [])
    .filter((ep) => keep(ep.conditions ?? {}))
    .map((ep) => ep.targetRef!.uid!)
    .sort();
const readyIn = (e: Slice) => uidsIn(e, (c) => Boolean(c.ready));
/** What the proxy routes to: the ready endpoints, and the serving-terminating ones (its fallback). */
const routableIn = (e: Slice) => ({
  ready: readyIn(e),
  servingTerminating: uidsIn(e, (c) => Boolean(c.serving && c.terminating)),
});

describe('service proxy syncs', () => {
  it("applies changes in syncs at least minSyncPeriod apart, and the last view is the slices' last state", async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedService({ namespace: ns, body: nodePortService('paced') });
    const slices = await watchAll<k8s.V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=paced' },
    );
    // Three pods turning Ready one after another: several slice changes inside one period.
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: labDeployment('paced', { replicas: 3, maxSurge: 3 }),
    });
    const three = await slices.waitFor((e) => readyIn(e).length === 3, 'three ready endpoints in the slice');
    const truth = async () => (await sim.proxyTruth(ns, 'paced'))!;
    const view = async () => {
      const change = (await truth()).changes.at(-1);
      return {
        ready: [...(change?.readyPodUids ?? [])].sort(),
        servingTerminating: [...(change?.servingTerminatingPodUids ?? [])].sort(),
      };
    };
    await expect.poll(view, { timeout: 10_000 }).toEqual(routableIn(three));
    const before = (await truth()).changes.length;

    // A deleted pod's endpoint turns not ready at once; its replacement follows, then the pod is gone.
    const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/name=paced' });
    const deleted = pods.items[0]!.metadata!.uid!;
    await core.deleteNamespacedPod({ namespace: ns, name: pods.items[0]!.metadata!.name! });
    const last = await slices.waitFor(
      (e) => readyIn(e).length === 3 && !(e.object.endpoints ?? []).some((ep) => ep.targetRef?.uid === deleted),
      'the replacement ready and the deleted pod gone from the slice',
    );
    slices.stop();
    // The view catches up with the slices' last state: no change is lost.
    await expect.poll(view, { timeout: 10_000 }).toEqual(routableIn(last));
    const changes = (await truth()).changes;
    // The first sync after the delete already dropped the pod from the ready set, and it never came back.
    expect(changes.length).toBeGreaterThan(before);
    for (const change of changes.slice(before)) expect(change.readyPodUids).not.toContain(deleted);
    for (let i = 1; i < changes.length; i++) {
      // Each sync starts no sooner than a period after the previous one ended, and takes its own time.
      expect(changes[i]!.syncedAt - changes[i - 1]!.syncedAt).toBeGreaterThanOrEqual(
        MIN_SYNC_PERIOD_MS + SYNC_DURATION_MS,
      );
    }
    // The data path has a sync's rules only once it has handed them over.
    for (const change of changes) expect(change.at).toBeGreaterThanOrEqual(change.syncedAt);
    expect((await truth()).syncDelayMs).toBeNull();
  });

  it('applies a change that arrives during a sync in the next one (no change is lost to the runner)', async () => {
    const store = new Store();
    const proxy = new ServiceProxy(store, () => undefined, { minSyncPeriodMs: 200, syncDurationMs: 100 });
    const endpoint = (uid: string) => ({
      addresses: ['127.0.0.1'],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', uid },
    });
    const slice: KubeObject = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'unit-abc',
        namespace: ns,
        uid: 'slice-uid',
        resourceVersion: '',
        creationTimestamp: '',
        labels: { [SERVICE_NAME_LABEL]: 'unit', [MANAGED_BY_LABEL]: MANAGED_BY },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [endpoint('a')],
    };
    try {
      store.create('endpointslices', slice);
      // A quiet spell before it: the sync starts at once and takes the slice as it is now.
      await new Promise((resolve) => setImmediate(resolve));
      store.update('endpointslices', {
        ...store.get('endpointslices', ns, 'unit-abc')!,
        endpoints: [endpoint('a'), endpoint('b')],
      });
      await expect
        .poll(async () => (await proxy.truth(ns, 'unit'))?.changes.map((c) => c.readyPodUids), { timeout: 5_000 })
        .toEqual([['a'], ['a', 'b']]);
      const [first, second] = (await proxy.truth(ns, 'unit'))!.changes;
      expect(second!.syncedAt - first!.syncedAt).toBeGreaterThanOrEqual(200 + 100);
    } finally {
      await proxy.stop();
    }
  });
});
