// `reap --all-owners --class NAME`: every namespace labelled termlab.io/class=NAME (the class's own and
// each student's), and no other namespace, even one with the same env's pods.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { ENV_LABEL, ownershipLabels } from '../../harness/safety/labels.ts';
import { formatReapClass, reapClass } from '../../harness/safety/reap-class.ts';
import { labPod } from '../support/sim.ts';

let sim: SimCluster;
let cluster: Cluster;

beforeAll(async () => {
  process.env.TERMLAB_STATE_DIR = join(mkdtempSync(join(tmpdir(), 'termlab-reap-class-')), 'state');
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
});
afterAll(async () => {
  await sim.stop();
});

async function namespace(name: string, labels: Record<string, string>) {
  await cluster.core.createNamespace({ body: { metadata: { name, labels } } });
}

async function expiredPod(namespace: string, name: string, owner: string) {
  const body = labPod(name, { finalizers: ['termlab.io/hold'] });
  body.metadata!.labels = { ...ownershipLabels(owner, `run-${owner}`, 's'), [ENV_LABEL]: 'termlab-class' };
  body.spec = { ...body.spec!, activeDeadlineSeconds: 600 };
  await cluster.core.createNamespacedPod({ namespace, body });
}

describe('reap --all-owners --class', () => {
  it('takes the expired pods of every namespace of the class, and of no other', async () => {
    await namespace('termlab', { 'termlab.io/class': 'termlab' });
    await namespace('termlab-alice', { 'termlab.io/class': 'termlab', 'termlab.io/student': 'alice' });
    await namespace('termlab-bob', { 'termlab.io/class': 'termlab', 'termlab.io/student': 'bob' });
    await namespace('other-class-carol', { 'termlab.io/class': 'other', 'termlab.io/student': 'carol' });
    await expiredPod('termlab-alice', 'alice-1', 'alice');
    await expiredPod('termlab-bob', 'bob-1', 'bob');
    await expiredPod('other-class-carol', 'carol-1', 'carol');
    const later = () => Date.now() + 700_000;
    const report = await reapClass(cluster, 'termlab', 'termlab-class', { now: later });
    expect(report.namespaces.map((n) => [n.namespace, n.entries.map((e) => `${e.pod}:${e.result}`)])).toEqual([
      ['termlab', []],
      ['termlab-alice', ['alice-1:deleted']],
      ['termlab-bob', ['bob-1:deleted']],
    ]);
    expect(formatReapClass(report, 'termlab', 'termlab-class')).toMatch(
      /reap --all-owners class=termlab \(3 namespace\(s\)\) env=termlab-class: 2 deleted, 0 would be deleted, 0 skipped, 0 failed\n$/,
    );
    const carol = await cluster.core.listNamespacedPod({ namespace: 'other-class-carol' });
    expect(carol.items.map((p) => [p.metadata?.name, Boolean(p.metadata?.deletionTimestamp)])).toEqual([
      ['carol-1', false],
    ]);
  });
});
