// A rollout that never completes: the Deployment's new pods can never start (their image went away
// from the node after the old pods started: a tag deleted from the registry, say), so the Deployment
// controller marks it ProgressDeadlineExceeded. `termlab verify` must end on that, not hang: exit 5
// (ROLLOUT_STALLED) naming the Deployment, what it waited for and the condition, with its own load
// pod removed and the observation saved (and regraded offline to the same verdict and exit code).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { defaultImages, type ImageMap, labServerBundle } from '../../cluster/sim/runtime.ts';
import { runCli } from '../support/cli.ts';
import { createApp } from './support.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
let images: ImageMap;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-stall-'));
const kubeconfig = join(dir, 'kubeconfig');
/** The team's image: the lab server under its own name, so it can go away while the load pod's stays. */
const APP_IMAGE = 'shop/web';

beforeAll(async () => {
  const lab = defaultImages(await labServerBundle());
  images = { ...lab, [APP_IMAGE]: lab['termlab/lab-server']! };
  sim = await startSimCluster({ images });
  writeFileSync(kubeconfig, sim.kubeconfig);
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await createApp(kc, 'default', {
    name: 'web-stuck',
    image: `${APP_IMAGE}:1`,
    replicas: 2,
    progressDeadlineSeconds: 6,
    preStopSleep: 1,
    grace: 5,
  });
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

describe('termlab verify: a rollout that never completes', () => {
  it('ends at ProgressDeadlineExceeded with exit 5 naming what it waited for; its load pod is gone and the observation is kept', async () => {
    // The old pods run; every pod made from now on stops at ErrImagePull.
    delete images[APP_IMAGE];
    const r = await runCli([
      'verify',
      'deployment/web-stuck',
      '--kubeconfig',
      kubeconfig,
      '--path',
      '/work?ms=100',
      '--rate',
      '20',
      '--output-dir',
      join(dir, 'out'),
      '-o',
      'json',
    ]);
    expect(r.code, r.stderr).toBe(EXIT.rolloutStalled);
    expect(r.stderr).toMatch(
      /ROLLOUT_STALLED: deployment\/web-stuck in namespace default did not finish rolling out: waited \d+s for 2 updated, available replicas of generation 2 and its 2 old pod\(s\) gone, and the Deployment controller gave up on it after progressDeadlineSeconds \(6s\)/,
    );
    expect(r.stderr).toMatch(
      /the Deployment says Progressing=False \(ProgressDeadlineExceeded\): ReplicaSet "web-stuck-[a-z0-9]+" has timed out progressing/,
    );
    expect(r.stderr).toMatch(/new pod\(s\): web-stuck-[a-z0-9]+-[a-z0-9]+: not ready, waiting \(ErrImagePull\)/);
    const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1)) as {
      verdict: string;
      rolloutStalled: boolean;
      requests: number;
      observation: string;
    };
    expect(summary).toMatchObject({ verdict: 'inconclusive', rolloutStalled: true });
    expect(summary.requests).toBeGreaterThan(0);

    const core = kc.makeApiClient(k8s.CoreV1Api);
    const left = await core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'app.kubernetes.io/managed-by=termlab',
    });
    expect(left.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name)).toEqual([]);
    expect(
      (
        await core.listNamespacedService({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/managed-by=termlab',
        })
      ).items,
    ).toEqual([]);
    // The old pods still serve: the Deployment is left as the stalled rollout left it.
    const d = await kc
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDeployment({ name: 'web-stuck', namespace: 'default' });
    expect(d.status?.availableReplicas).toBe(2);

    const offline = await runCli(['grade', summary.observation, '-o', 'json']);
    expect(offline.code).toBe(EXIT.rolloutStalled);
    expect(JSON.parse(offline.stdout)).toMatchObject({
      verdict: 'inconclusive',
      rolloutStalled: true,
      requests: summary.requests,
    });
  }, 240_000);
});
