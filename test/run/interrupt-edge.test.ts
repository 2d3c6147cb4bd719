// Ctrl-C on a real `termlab run` of an edge scenario while it rolls out under load: it stops cleanly, grades the
// stopped run inconclusive (never "differs": the rollout it did not see, and its own cleanup under the load), and
// leaves nothing of its own behind, its route included.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, listObjects, SERVICES, COLLECTIONS, type Cluster } from '../../harness/kube/index.ts';
import { interruptWhen } from '../support/interrupt.ts';
import { repoRoot } from '../support/processes.ts';

let sim: SimCluster;
let cluster: Cluster;
let dir: string;
beforeAll(async () => {
  sim = await startSimCluster({ edge: true });
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  dir = mkdtempSync(join(tmpdir(), 'termlab-int-edge-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
});

const owned = (owner: string) =>
  Promise.all(
    [
      COLLECTIONS.deployments('default'),
      SERVICES('default'),
      COLLECTIONS.pods('default'),
      '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes',
    ].map((path) => listObjects(cluster, path, `termlab.io/owner=${owner}`)),
  ).then((lists) => lists.flat().filter((o) => !o.deleting).length);

describe('Ctrl-C during an edge run', () => {
  it('while rolling out: exit 130, inconclusive with the stop named, nothing of its own left', async () => {
    const owner = 'ctrl-c-edge';
    const { code, stdout, stderr } = await interruptWhen(
      [
        join(repoRoot, 'bin', 'termlab.js'),
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--scenarios',
        join(repoRoot, 'manifests', 'edge.yaml'),
        '--only',
        'edge-no-prestop',
        '--owner',
        owner,
        '--output-dir',
        join(dir, 'run'),
      ],
      dir,
      (seen) => seen.includes('  rolling out'),
    );
    const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    expect(code, shown).toBe(130);
    expect(stdout, shown).toMatch(/edge-no-prestop .*inconclusive/);
    expect(stdout, shown).not.toMatch(/differs from the model|evidence invalid/);
    expect(stdout, shown).toMatch(/interrupted: this run is recorded as interrupted/);
    await expect.poll(() => owned(owner), { timeout: 30_000 }).toBe(0);
  });
});
