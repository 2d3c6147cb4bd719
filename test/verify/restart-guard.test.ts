// The restartedAt patch is guarded by the generation read, not the resourceVersion: a status or
// metadata update between the read and the patch (every readiness change on a busy node) must not
// stop it — on the real node it did, 422, and verify ended with exit 3 before acting — while a
// change of the spec still does, with an error that says so.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect } from '../../harness/kube/index.ts';
import { patchRestartedAt, RESTARTED_AT } from '../../harness/verify/kube.ts';
import { createApp } from './support.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await createApp(kc, 'default', { name: 'web', replicas: 1 });
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

describe('the restartedAt patch', () => {
  it('goes through when only the metadata moved since the read, and is refused by name when the spec did', async () => {
    const cluster = await connect({ kubeconfigText: sim.kubeconfig });
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const read = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    // Not the spec: the resourceVersion moves, the generation does not.
    const labelled = await apps.patchNamespacedDeployment({
      name: 'web',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }],
    });
    expect(labelled.metadata!.resourceVersion).not.toBe(read.metadata!.resourceVersion);
    expect(labelled.metadata!.generation).toBe(read.metadata!.generation);
    const patched = await patchRestartedAt(cluster, 'default', read, '2026-12-02T00:00:00Z');
    expect(patched.spec!.template.metadata!.annotations![RESTARTED_AT]).toBe('2026-12-02T00:00:00Z');

    // The spec changed since this read (the restart itself did): refused, and the error says why.
    await expect(patchRestartedAt(cluster, 'default', read, '2026-12-02T00:00:01Z')).rejects.toThrow(
      /deployment\/web in namespace default changed while verify was about to restart it \(its generation is no longer \d+\): someone else changed its spec/,
    );
  }, 60_000);
});
