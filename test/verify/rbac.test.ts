// manifests/rbac-verify.yaml is exactly what `termlab verify` uses: every call of a whole run (a
// rollout restart, a delete-pod, and one through a temporary Service), logged by a proxy in front of
// the simulated cluster and turned into the RBAC right it needs, is granted by the Role, and every
// right the Role grants was used. (The real node's RBAC is checked by test/verify/node-rbac.ts.)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { type ApiProxy, rbacOf, startApiProxy } from '../support/api-proxy.ts';
import { runCli } from '../support/cli.ts';
import { createApp } from './support.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
let proxy: ApiProxy;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-rbac-'));
/** What any authenticated user may do (system:basic-user): asking who it is. */
const EVERY_USER = new Set(['create selfsubjectreviews.authentication.k8s.io']);

function roleRights(): Set<string> {
  const rights = new Set<string>();
  for (const doc of parseAllDocuments(readFileSync('manifests/rbac-verify.yaml', 'utf8')) as { toJS(): any }[]) {
    const o = doc.toJS();
    if (o?.kind === 'Role')
      for (const r of o.rules)
        for (const g of r.apiGroups)
          for (const res of r.resources) for (const v of r.verbs) rights.add(`${v} ${res}${g ? `.${g}` : ''}`);
  }
  return rights;
}

beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await Promise.all([
    createApp(kc, 'default', { name: 'web', replicas: 2 }),
    createApp(kc, 'default', { name: 'web-del', replicas: 2 }),
    createApp(kc, 'default', { name: 'web-bare', replicas: 2 }),
  ]);
  // No Service selects web-bare's pods: its plan makes a temporary one.
  await kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedService({ name: 'web-bare', namespace: 'default' });
  proxy = await startApiProxy(sim.server);
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  await sim?.stop();
});

describe('manifests/rbac-verify.yaml', () => {
  it('grants every right a whole verify run uses, and nothing it does not use', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeconfig(kc.getCurrentUser()!.token!));
    for (const [name, action] of [
      ['web', 'rollout-restart'],
      ['web-del', 'delete-pod'],
      ['web-bare', 'rollout-restart'],
    ] as const) {
      const r = await runCli([
        'verify',
        `deployment/${name}`,
        '--kubeconfig',
        kubeconfig,
        '--action',
        action,
        '--path',
        '/work?ms=100',
        '--output-dir',
        join(dir, name),
        '-o',
        'json',
      ]);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
    }
    const used = new Set(proxy.requests.map(rbacOf).filter((r): r is string => r !== null && !EVERY_USER.has(r)));
    const role = roleRights();
    expect({
      missing: [...used].filter((r) => !role.has(r)).sort(),
      unused: [...role].filter((r) => !used.has(r)).sort(),
    }).toEqual({ missing: [], unused: [] });
  }, 360_000);
});
