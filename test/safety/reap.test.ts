import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { ownershipLabels } from '../../harness/safety/labels.ts';
import { reap } from '../../harness/safety/reap.ts';
import { newRunRecord, readRun, saveRun } from '../../harness/safety/runs.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';
import { labPod } from '../support/sim.ts';

let sim: SimCluster;
let cluster: Cluster;
let dir: string;
const deadPid = spawnSync('true').pid!; // a process that has already exited

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'termlab-reap-'));
  process.env.TERMLAB_STATE_DIR = join(dir, 'state');
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim.stop();
});

async function deadRun(runId: string, owner: string) {
  await saveRun({
    ...newRunRecord({
      runId,
      owner,
      context: 'termlab-sim',
      namespace: 'default',
      deadline: new Date(Date.now() + 3_600_000).toISOString(),
    }),
    pid: deadPid,
  });
}

async function pod(name: string, labels: Record<string, string>, extra: Partial<k8s.V1PodSpec> = {}) {
  const body = labPod(name, { finalizers: ['termlab.io/hold'] });
  body.metadata!.labels = labels;
  body.spec = { ...body.spec!, activeDeadlineSeconds: 600, ...extra };
  return cluster.core.createNamespacedPod({ namespace: 'default', body });
}

/** Pods not being deleted; with `all`, terminating ones too (they still exist). */
const names = async (selector?: string, all = false) =>
  (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: selector })).items
    .filter((p) => all || !p.metadata?.deletionTimestamp)
    .map((p) => p.metadata!.name!)
    .sort();

describe('termlab reap', () => {
  it("never touches another owner's pods or unlabelled ones, and reports them as not mine", async () => {
    await deadRun('run-a-0001', 'ada');
    await deadRun('run-b-0001', 'bob');
    await pod('ada-1', ownershipLabels('ada', 'run-a-0001', 's'));
    await pod('bob-1', ownershipLabels('bob', 'run-b-0001', 's'));
    await pod('plain-1', { app: 'someone-elses' });
    const report = await reap(cluster, 'default', 'ada');
    expect(report.entries).toEqual([
      { pod: 'ada-1', run: 'run-a-0001', result: 'deleted', why: expect.stringContaining('process') },
    ]);
    expect(report.notMine.map((n) => [n.pod, n.owner])).toEqual(
      expect.arrayContaining([
        ['bob-1', 'bob'],
        ['plain-1', null],
      ]),
    );
    await expect.poll(() => names()).not.toContain('ada-1');
    expect(await names()).toEqual(expect.arrayContaining(['bob-1', 'plain-1']));
  });

  it('goes on past a failed delete, reports it, and removes that pod the next time', async () => {
    await deadRun('run-a-0002', 'ann');
    for (const n of ['ann-1', 'ann-2', 'ann-3']) await pod(n, ownershipLabels('ann', 'run-a-0002', 's'));
    sim.fault({ fault: 'fail-next-delete', namespace: 'default', name: 'ann-2' });
    // With no outage budget the 500 is not tried again: the failure stays this reap's.
    const impatient = await connect({ kubeconfigText: sim.kubeconfig, apiPatienceMs: 0 });
    const first = await reap(impatient, 'default', 'ann');
    expect(first.entries.map((e) => [e.pod, e.result])).toEqual([
      ['ann-1', 'deleted'],
      ['ann-2', 'failed'],
      ['ann-3', 'deleted'],
    ]);
    expect(first.entries[1]!.why).toMatch(/500.*tried again next time/);
    expect((await readRun('run-a-0002'))?.status).toBe('running');
    const second = await reap(cluster, 'default', 'ann');
    // The pods deleted the first time may still be terminating: those are skipped, not deleted twice.
    expect(second.entries.filter((e) => e.result !== 'skipped').map((e) => [e.pod, e.result])).toEqual([
      ['ann-2', 'deleted'],
    ]);
    expect(second.entries.filter((e) => e.result === 'skipped').every((e) => e.why === 'already being deleted')).toBe(
      true,
    );
    await expect.poll(() => names('termlab.io/owner=ann', true), { timeout: 15_000 }).toEqual([]);
    await reap(cluster, 'default', 'ann');
    expect((await readRun('run-a-0002'))?.status).toBe('failed');
  });

  it('tries a delete that failed with 500 again within the outage budget', async () => {
    await deadRun('run-a-0003', 'abe');
    await pod('abe-1', ownershipLabels('abe', 'run-a-0003', 's'));
    sim.fault({ fault: 'fail-next-delete', namespace: 'default', name: 'abe-1' });
    const report = await reap(cluster, 'default', 'abe');
    expect(report.entries.map((e) => [e.pod, e.result])).toEqual([['abe-1', 'deleted']]);
    await expect.poll(() => names('termlab.io/owner=abe', true), { timeout: 15_000 }).toEqual([]);
  });

  it('leaves a pod created after the list, and one replaced since the list', async () => {
    await deadRun('run-c-0001', 'cy');
    const original = await pod('cy-1', ownershipLabels('cy', 'run-c-0001', 's'));
    const report = await reap(cluster, 'default', 'cy', {
      afterList: async () => {
        await pod('cy-late', ownershipLabels('cy', 'run-c-0001', 's'));
        await cluster.core.patchNamespacedPod({
          name: 'cy-1',
          namespace: 'default',
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        });
        await cluster.core.deleteNamespacedPod({ name: 'cy-1', namespace: 'default', gracePeriodSeconds: 0 });
        await expect
          .poll(() =>
            cluster.core
              .listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name=cy-1' })
              .then((l) => l.items.length),
          )
          .toBe(0);
        await pod('cy-1', ownershipLabels('cy', 'run-c-0001', 's'));
      },
    });
    expect(report.entries).toEqual([
      { pod: 'cy-1', run: 'run-c-0001', result: 'skipped', why: 'replaced by a new pod since the list' },
    ]);
    const now = await cluster.core.readNamespacedPod({ name: 'cy-1', namespace: 'default' });
    expect(now.metadata?.uid).not.toBe(original.metadata?.uid);
    expect(await names('termlab.io/owner=cy')).toEqual(['cy-1', 'cy-late']);
  });

  it('keeps pods of a live run and pods with no record whose deadline has not passed; dry run deletes nothing', async () => {
    await saveRun(
      newRunRecord({
        runId: 'run-d-live',
        owner: 'dee',
        context: 'termlab-sim',
        namespace: 'default',
        deadline: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    );
    await pod('dee-live', ownershipLabels('dee', 'run-d-live', 's'));
    await pod('dee-unknown', ownershipLabels('dee', 'run-d-elsewhere', 's'));
    await pod('dee-expired', ownershipLabels('dee', 'run-d-elsewhere2', 's'), { activeDeadlineSeconds: 0 });
    const dry = await reap(cluster, 'default', 'dee', { dryRun: true });
    expect(Object.fromEntries(dry.entries.map((e) => [e.pod, e.result]))).toEqual({
      'dee-live': 'skipped',
      'dee-unknown': 'skipped',
      'dee-expired': 'would delete',
    });
    expect(dry.entries.find((e) => e.pod === 'dee-unknown')?.why).toMatch(
      /no record of run run-d-elsewhere here; its deadline is in \d+s/,
    );
    expect(await names('termlab.io/owner=dee')).toEqual(['dee-expired', 'dee-live', 'dee-unknown']);
  });

  it('cleans up after a termlab run killed with SIGKILL', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'no-prestop,immediate-exit',
        '--owner',
        'eve',
        '--output-dir',
        join(dir, 'killed'),
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } },
    );
    let out = '';
    // Both pods exist and neither has been deleted yet (that comes only after Ready and a request):
    // waiting for both requests instead let a fast scenario finish first on a loaded machine.
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (c: Buffer) => {
        out += c;
        if ((out.match(/waiting for Ready/g) ?? []).length >= 2) resolve();
      }),
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    expect(await names('termlab.io/owner=eve')).toHaveLength(2);
    const r = await runCli(['reap', '--kubeconfig', join(dir, 'kubeconfig'), '--owner', 'eve'], {
      TERMLAB_STATE_DIR: process.env.TERMLAB_STATE_DIR,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 deleted/);
    await expect.poll(() => names('termlab.io/owner=eve', true), { timeout: 15_000 }).toEqual([]);
  });

  it('refuses a run that would pass the pod cap', async () => {
    await saveRun(
      newRunRecord({
        runId: 'run-f-live',
        owner: 'fay',
        context: 'termlab-sim',
        namespace: 'default',
        deadline: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    );
    for (const n of ['fay-1', 'fay-2']) await pod(n, ownershipLabels('fay', 'run-f-live', 's'));
    const r = await runCli(
      [
        'run',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--owner',
        'fay',
        '--max-pods',
        '3',
        '--only',
        'no-prestop,short-grace',
      ],
      { TERMLAB_STATE_DIR: process.env.TERMLAB_STATE_DIR },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('owner fay already has 2 live lab pod(s) in default; 2 more would pass --max-pods 3');
    expect(await names('termlab.io/owner=fay')).toEqual(['fay-1', 'fay-2']);
  });
});
