import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { AppsV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { ENV_LABEL, ownershipLabels } from '../../harness/safety/labels.ts';
import { reapAllOwners } from '../../harness/safety/reap-all.ts';
import { EXPIRES_ANNOTATION } from '../../harness/safety/reap-workloads.ts';
import { labDeployment, nodePortService } from '../support/sim-apps.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';
import { labPod } from '../support/sim.ts';

const DEADLINE_SECONDS = 600;
/** A clock past every test pod's deadline, so no test waits for one. */
const afterDeadline = () => Date.now() + (DEADLINE_SECONDS + 60) * 1000;

let sim: SimCluster;
let cluster: Cluster;
let apps: k8s.AppsV1Api;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'termlab-reap-all-'));
  process.env.TERMLAB_STATE_DIR = join(dir, 'state');
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  apps = cluster.kc.makeApiClient(AppsV1Api);
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim.stop();
});

const inEnv = (env: string, owner: string, run = `run-${owner}`) => ({
  ...ownershipLabels(owner, run, 's'),
  [ENV_LABEL]: env,
});

async function pod(name: string, labels: Record<string, string>, deadline = DEADLINE_SECONDS) {
  const body = labPod(name, { finalizers: ['termlab.io/hold'] });
  body.metadata!.labels = labels;
  body.spec = { ...body.spec!, activeDeadlineSeconds: deadline };
  return cluster.core.createNamespacedPod({ namespace: 'default', body });
}

const names = async (selector: string) =>
  (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: selector })).items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .map((p) => p.metadata!.name!)
    .sort();
const table = (entries: { pod: string; result: string }[]) => Object.fromEntries(entries.map((e) => [e.pod, e.result]));

describe('termlab reap --all-owners', () => {
  it("takes every owner's expired pods of this environment, and nothing else", async () => {
    await pod('a-ada', inEnv('class-a', 'ada'));
    await pod('a-bob', inEnv('class-a', 'bob'));
    await pod('a-fresh', inEnv('class-a', 'cy'), DEADLINE_SECONDS * 10);
    await pod('b-dee', inEnv('class-b', 'dee'));
    await pod('nolabel', ownershipLabels('eve', 'run-eve', 's'));
    await pod('not-termlab', { [ENV_LABEL]: 'class-a', app: 'other' });
    const dry = await reapAllOwners(cluster, 'default', 'class-a', { dryRun: true, now: afterDeadline });
    expect(table(dry)).toEqual({ 'a-ada': 'would delete', 'a-bob': 'would delete', 'a-fresh': 'skipped' });
    expect(dry.find((e) => e.pod === 'a-fresh')!.why).toMatch(/its deadline is in \d+s/);
    expect(await names(`${ENV_LABEL}=class-a`)).toEqual(['a-ada', 'a-bob', 'a-fresh', 'not-termlab']);

    const real = await reapAllOwners(cluster, 'default', 'class-a', { now: afterDeadline });
    expect(table(real)).toEqual({ 'a-ada': 'deleted', 'a-bob': 'deleted', 'a-fresh': 'skipped' });
    await expect.poll(() => names(`${ENV_LABEL}=class-a`), { timeout: 15_000 }).toEqual(['a-fresh', 'not-termlab']);
    expect(await names('termlab.io/owner in (dee,eve)')).toEqual(['b-dee', 'nolabel']);
    // Before the deadline nothing of this class goes.
    expect(table(await reapAllOwners(cluster, 'default', 'class-b'))).toEqual({ 'b-dee': 'skipped' });
  });

  it("takes every owner's expired rollout Deployments and Services of this environment, and nothing without an expiry", async () => {
    const expires = (ms: number) => ({ [EXPIRES_ANNOTATION]: new Date(ms).toISOString() });
    const deployment = (name: string, labels: Record<string, string>, annotations: Record<string, string>) =>
      apps.createNamespacedDeployment({
        namespace: 'default',
        body: { ...labDeployment(name, { replicas: 0 }), metadata: { name, labels, annotations } },
      });
    const service = (name: string, labels: Record<string, string>, annotations: Record<string, string>) =>
      cluster.core.createNamespacedService({
        namespace: 'default',
        body: { ...nodePortService(name), metadata: { name, labels, annotations } },
      });
    const past = Date.now() - 60_000;
    await deployment('w-old', inEnv('class-w', 'ada'), expires(past));
    await service('w-old', inEnv('class-w', 'ada'), expires(past));
    await deployment('w-new', inEnv('class-w', 'bob'), expires(Date.now() + 3_600_000));
    await service('w-none', inEnv('class-w', 'cy'), {});
    await deployment('x-old', inEnv('class-x', 'dee'), expires(past));
    const dry = await reapAllOwners(cluster, 'default', 'class-w', { dryRun: true });
    expect(table(dry)).toEqual({
      'deployment/w-old': 'would delete',
      'service/w-old': 'would delete',
      'deployment/w-new': 'skipped',
      'service/w-none': 'skipped',
    });
    expect(dry.find((e) => e.pod === 'service/w-none')!.why).toMatch(/never guessed/);
    const real = await reapAllOwners(cluster, 'default', 'class-w');
    expect(table(real)).toMatchObject({
      'deployment/w-old': 'deleted',
      'service/w-old': 'deleted',
      'deployment/w-new': 'skipped',
    });
    const left = async () =>
      [
        ...(await apps.listNamespacedDeployment({ namespace: 'default' })).items
          .filter((d) => !d.metadata?.deletionTimestamp)
          .map((d) => `deployment/${d.metadata!.name}`),
        ...(await cluster.core.listNamespacedService({ namespace: 'default' })).items.map(
          (d) => `service/${d.metadata!.name}`,
        ),
      ].sort();
    await expect.poll(left, { timeout: 15_000 }).toEqual(['deployment/w-new', 'deployment/x-old', 'service/w-none']);
  });

  it('isolates a failed delete, counts it failed, and takes the pod next time', async () => {
    for (const n of ['c-1', 'c-2', 'c-3']) await pod(n, inEnv('class-c', n));
    sim.fault({ fault: 'fail-next-delete', namespace: 'default', name: 'c-2' });
    // With no outage budget the 500 is not tried again: the failure stays this reap's.
    const impatient = await connect({ kubeconfigText: sim.kubeconfig, apiPatienceMs: 0 });
    const first = await reapAllOwners(impatient, 'default', 'class-c', { now: afterDeadline });
    expect(table(first)).toEqual({ 'c-1': 'deleted', 'c-2': 'failed', 'c-3': 'deleted' });
    expect(first.find((e) => e.pod === 'c-2')!.why).toMatch(/500.*tried again next time/);
    const second = await reapAllOwners(cluster, 'default', 'class-c', { now: afterDeadline });
    expect(second.filter((e) => e.result !== 'skipped').map((e) => [e.pod, e.result])).toEqual([['c-2', 'deleted']]);
  });

  it('reads each pod again: a pod replaced or moved to another environment since the list is left', async () => {
    const original = await pod('d-1', inEnv('class-d', 'ann'));
    await pod('d-2', inEnv('class-d', 'ben'));
    const entries = await reapAllOwners(cluster, 'default', 'class-d', {
      now: afterDeadline,
      afterList: async () => {
        await cluster.core.patchNamespacedPod({
          name: 'd-1',
          namespace: 'default',
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        });
        await cluster.core.deleteNamespacedPod({ name: 'd-1', namespace: 'default', gracePeriodSeconds: 0 });
        await expect
          .poll(() =>
            cluster.core
              .listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name=d-1' })
              .then((l) => l.items.length),
          )
          .toBe(0);
        await pod('d-1', inEnv('class-d', 'ann'));
        await cluster.core.patchNamespacedPod({
          name: 'd-2',
          namespace: 'default',
          body: [{ op: 'replace', path: `/metadata/labels/${ENV_LABEL.replace('/', '~1')}`, value: 'class-other' }],
        });
      },
    });
    expect(entries.map((e) => [e.pod, e.result, e.why])).toEqual([
      ['d-1', 'skipped', 'replaced by a new pod since the list'],
      ['d-2', 'skipped', 'changed since the list: not a termlab pod of environment class-d'],
    ]);
    const now = await cluster.core.readNamespacedPod({ name: 'd-1', namespace: 'default' });
    expect(now.metadata?.uid).not.toBe(original.metadata?.uid);
    expect(await names('termlab.io/owner in (ann,ben)')).toEqual(['d-1', 'd-2']);
  });

  it('runs from the command line only with a namespace and an environment, and logs its counts', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    await pod('e-1', inEnv('class-e', 'fay'), 0);
    expect(await runCli(['reap', '--all-owners', '--kubeconfig', kubeconfig, '--env', 'class-e'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--all-owners needs --namespace NS'),
    });
    expect(await runCli(['reap', '--all-owners', '--kubeconfig', kubeconfig, '--namespace', 'default'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--all-owners needs --env NAME'),
    });
    expect(
      await runCli([
        'reap',
        '--all-owners',
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        'default',
        '--env',
        'bad value!',
      ]),
    ).toMatchObject({ code: 2, stderr: expect.stringContaining('--env: "bad value!" is not a valid label value') });
    const r = await runCli([
      'reap',
      '--all-owners',
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      'default',
      '--env',
      'class-e',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'reap --all-owners namespace=default env=class-e: 1 deleted, 0 would be deleted, 0 skipped, 0 failed',
    );
  });

  it('termlab run puts the environment label on its pods (--env or the lab file)', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'no-prestop',
        '--owner',
        'gus',
        '--lab',
        'manifests/lab.yaml',
        '--output-dir',
        join(dir, 'run'),
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } },
    );
    let out = '';
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (c: Buffer) => {
        out += c;
        if (out.includes('request in flight')) resolve();
      }),
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const pods: k8s.V1Pod[] = (
      await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: 'termlab.io/owner=gus' })
    ).items;
    expect(pods.map((p) => p.metadata?.labels?.[ENV_LABEL])).toEqual(['termlab-class']);
    const r = await runCli([
      'reap',
      '--all-owners',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--namespace',
      'default',
      '--lab',
      'manifests/lab.yaml',
      '--dry-run',
    ]);
    expect(r.stdout).toMatch(/skipped +tl-no-prestop-\w+ \(owner gus, run-[\w-]+\): its deadline is in \d+s/);
  });
});
