// A killed rollout leaves a Deployment and a Service (an edge scenario an HTTPRoute or an Ingress too): the
// reaper takes this owner's ones of dead or expired runs, never another owner's or a live run's, and the
// Deployment's pods go with it.
import type * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import {
  COLLECTIONS,
  connect,
  createDeployment,
  createRoute,
  createService,
  listObjects,
  SERVICES,
  type Cluster,
} from '../../harness/kube/index.ts';
import { reap } from '../../harness/safety/reap.ts';
import { newRunRecord, saveRun } from '../../harness/safety/runs.ts';
import type { EdgeScenario } from '../../harness/scenario/edge.ts';
import { renderRoute } from '../../harness/scenario/render-edge.ts';
import { renderDeployment, renderService } from '../../harness/scenario/render-rollout.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';
import type { RolloutScenario } from '../../harness/scenario/rollout.ts';

let sim: SimCluster;
let cluster: Cluster;
let scenario: RolloutScenario;
let edgeScenario: EdgeScenario;
const deadPid = spawnSync('true').pid!;

beforeAll(async () => {
  process.env.TERMLAB_STATE_DIR = join(mkdtempSync(join(tmpdir(), 'termlab-reap-workloads-')), 'state');
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  const set = await loadScenarioSet('manifests/rollout.yaml', ['rollout-adds-prestop']);
  if (set.kind !== 'rollout') throw new Error('not a rollout file');
  scenario = { ...set.scenarios[0]!, replicas: 1 };
  const edge = await loadScenarioSet('manifests/edge.yaml', ['edge-no-prestop']);
  if (edge.kind !== 'edge') throw new Error('not an edge file');
  edgeScenario = edge.scenarios[0]!;
});
afterAll(async () => {
  await sim?.stop();
});

async function leave(name: string, owner: string, runId: string, expiresAt: number) {
  const template = await loadTemplate();
  const o = { name, owner, runId, expiresAt };
  await createService(cluster, 'default', renderService(template, scenario, o) as k8s.V1Service);
  await createDeployment(cluster, 'default', renderDeployment(template, scenario, o) as k8s.V1Deployment);
  for (const via of ['httproute', 'ingress'] as const)
    await createRoute(cluster, 'default', via, renderRoute({ ...edgeScenario, via }, o));
}
/** Each kind a rollout or an edge scenario leaves, and where it is listed. */
const KINDS: [string, string][] = [
  ['deployment', COLLECTIONS.deployments('default')],
  ['service', SERVICES('default')],
  ['httproute', '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes'],
  ['ingress', '/apis/networking.k8s.io/v1/namespaces/default/ingresses'],
];
const left = async () =>
  (
    await Promise.all(
      KINDS.map(async ([kind, path]) =>
        (
          await listObjects(cluster, path, 'app.kubernetes.io/managed-by=termlab')
        )
          .filter((o) => !o.deleting)
          .map((o) => `${kind}/${o.name}`),
      ),
    )
  )
    .flat()
    .sort();

describe("reaping a rollout's objects", () => {
  it("takes a dead run's and an expired unknown run's; leaves a live-looking one, an unexpired unknown one and another owner's", async () => {
    await saveRun({
      ...newRunRecord({
        runId: 'run-dead-0001',
        owner: 'me',
        context: 'termlab-sim',
        namespace: 'default',
        deadline: new Date(Date.now() + 3_600_000).toISOString(),
      }),
      pid: deadPid,
    });
    await saveRun(
      newRunRecord({
        runId: 'run-live-0002',
        owner: 'me',
        context: 'termlab-sim',
        namespace: 'default',
        deadline: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    );
    const hourAgo = Date.now() - 3_600_000,
      inAnHour = Date.now() + 3_600_000;
    await leave('tl-dead', 'me', 'run-dead-0001', inAnHour);
    await leave('tl-live', 'me', 'run-live-0002', hourAgo);
    await leave('tl-expired', 'me', 'run-unknown-0003', hourAgo);
    await leave('tl-fresh', 'me', 'run-unknown-0004', inAnHour);
    await leave('tl-theirs', 'someone-else', 'run-dead-0001', hourAgo);

    const dry = await reap(cluster, 'default', 'me', { dryRun: true });
    const objects = (entries: { pod: string; result: string }[], result: string) =>
      entries
        .filter((e) => e.result === result && /^(deployment|service|httproute|ingress)\//.test(e.pod))
        .map((e) => e.pod)
        .sort();
    const taken = [
      'deployment/tl-dead',
      'deployment/tl-expired',
      'httproute/tl-dead',
      'httproute/tl-expired',
      'ingress/tl-dead',
      'ingress/tl-expired',
      'service/tl-dead',
      'service/tl-expired',
    ];
    expect(objects(dry.entries, 'would delete')).toEqual(taken);
    expect(await left()).toHaveLength(20);

    const report = await reap(cluster, 'default', 'me');
    expect(objects(report.entries, 'deleted')).toEqual(taken);
    expect(await left()).toEqual(
      ['deployment', 'httproute', 'ingress', 'service'].flatMap((kind) =>
        ['tl-fresh', 'tl-live', 'tl-theirs'].map((name) => `${kind}/${name}`),
      ),
    );
  });
});
