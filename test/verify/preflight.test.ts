// `termlab verify` tries each write of its plan with dryRun=All before making any: a right the user
// lacks is named (exit 3) while nothing has been created or changed. The user here is able in all but
// one right, taken away by a proxy in front of the simulated cluster that answers 403 as RBAC does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { type ApiProxy, rbacOf, startApiProxy } from '../support/api-proxy.ts';
import { runCli } from '../support/cli.ts';
import { createApp } from './support.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-preflight-'));

beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await createApp(kc, 'default', { name: 'web', replicas: 2 });
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

/** verify through a proxy that refuses one right; what it asked for, and what it made. */
async function verifyWithout(right: string, args: string[] = []) {
  const proxy: ApiProxy = await startApiProxy(sim.server, {
    refuse: (req, url) =>
      rbacOf({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, status: 0 }) === right
        ? `${right.split(' ')[1]} is forbidden: User "dev" cannot ${right.split(' ')[0]} resource in the namespace "default"`
        : null,
  });
  try {
    const kubeconfig = join(dir, `${right.replace(/\W+/g, '-')}.kubeconfig`);
    writeFileSync(kubeconfig, proxy.kubeconfig(kc.getCurrentUser()!.token!));
    const r = await runCli([
      'verify',
      'deployment/web',
      '--kubeconfig',
      kubeconfig,
      '--path',
      '/work?ms=100',
      '--output-dir',
      join(dir, 'out'),
      ...args,
    ]);
    const writes = proxy.requests.filter((q) => q.method !== 'GET' && !q.path.includes('selfsubjectreviews'));
    return {
      r,
      writes,
      dryRuns: writes.filter((q) => q.query.get('dryRun') === 'All'),
      real: writes.filter((q) => q.query.get('dryRun') !== 'All'),
    };
  } finally {
    await proxy.stop();
  }
}

describe('termlab verify: every write tried with dryRun=All first', () => {
  it.each([
    ['patch deployments.apps', [], /forbidden: cannot patch deployments in namespace default/],
    ['create pods', [], /forbidden: cannot create pods in namespace default/],
    ['delete pods', ['--action', 'delete-pod'], /forbidden: cannot delete pods in namespace default/],
    ['get pods/log', [], /forbidden: cannot get pods\/log in namespace default/],
  ])(
    'without %s: named, exit 3, and nothing made or changed',
    async (right, args, message) => {
      const { r, dryRuns, real } = await verifyWithout(right, args);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(3);
      expect(real.map((q) => `${q.method} ${q.path}`)).toEqual([]);
      if (right !== 'get pods/log') expect(dryRuns.some((q) => rbacOf(q) === right)).toBe(true);
      const d = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: 'web', namespace: 'default' });
      expect(d.spec?.template.metadata?.annotations).toBeUndefined();
      const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: 'default' });
      expect(
        pods.items.filter(
          (p) => p.metadata?.deletionTimestamp || p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'termlab',
        ),
      ).toEqual([]);
    },
    120_000,
  );
});
