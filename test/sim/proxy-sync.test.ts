// The service proxy's default timing is kube-proxy's BoundedFrequencyRunner: a sync at once after a
// quiet spell, otherwise not before minSyncPeriod has passed since the last sync ended.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
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
afterAll(async () => { await sim?.stop(); });

describe('service proxy syncs', () => {
  it('applies changes in syncs at least minSyncPeriod apart, and the last view is the slices\' last state', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedService({ namespace: ns, body: nodePortService('paced') });
    const watch = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, { fieldSelector: 'metadata.name=paced' });
    // Three pods turning Ready one after another: several slice changes inside one period.
    await apps.createNamespacedDeployment({ namespace: ns, body: labDeployment('paced', { replicas: 3, maxSurge: 3 }) });
    await watch.waitFor((e) => e.object.status?.availableReplicas === 3, 'three available');
    watch.stop();
    const slices = await watchAll<k8s.V1EndpointSlice>(kc, `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { labelSelector: 'kubernetes.io/service-name=paced' });
    const readyInSlice = (e: { object: k8s.V1EndpointSlice }) => (e.object.endpoints ?? []).filter((ep) => ep.conditions?.ready).length;
    await slices.waitFor((e) => readyInSlice(e) === 3, 'three ready endpoints in the slice');
    slices.stop();
    const truth = () => sim.proxyTruth(ns, 'paced')!;
    const viewReady = (n: number) => new Promise<void>((resolve) => {
      const check = () => (truth().changes.at(-1)?.readyPodUids.length === n ? resolve() : setImmediate(check));
      check();
    });
    await viewReady(3);
    // A deleted pod's endpoint turns not ready at once: a change right after the last sync.
    const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/name=paced' });
    await core.deleteNamespacedPod({ namespace: ns, name: pods.items[0]!.metadata!.name! });
    await viewReady(2);
    const changes = truth().changes;
    expect(changes.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < changes.length; i++) {
      // Each sync starts no sooner than a period after the previous one ended, and takes its own time.
      expect(changes[i]!.at - changes[i - 1]!.at).toBeGreaterThanOrEqual(MIN_SYNC_PERIOD_MS + SYNC_DURATION_MS);
    }
    expect(truth().syncDelayMs).toBeNull();
  });
});
