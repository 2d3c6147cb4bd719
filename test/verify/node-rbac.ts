// manifests/rbac-verify.yaml on the real node (not a vitest file: run it under the node's lock,
// `flock /work/node.lock npx tsx test/verify/node-rbac.ts ADMIN_KUBECONFIG KUBECTL`). As the admin it
// makes a namespace, applies the Role, RoleBinding and ServiceAccount there, and a Deployment behind
// a Service; then, as the ServiceAccount (a kubeconfig around `kubectl create token`), it runs
// `termlab verify` for rollout-restart and delete-pod straight at the API server, and once more each
// through a logging proxy that records every call. Each call becomes the RBAC right it needs; the
// Role's rights are set beside them: needed and granted, used but missing (a 403), granted but never
// used. Prints `name: value` lines; deletes the namespace at the end.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { rbacOf, startApiProxy } from '../support/api-proxy.ts';
import { runCli } from '../support/cli.ts';
import { createApp } from './support.ts';

const [adminKubeconfig, kubectlPath = 'kubectl', namespace = 'verify-rbac'] = process.argv.slice(2);
if (!adminKubeconfig) {
  console.error('usage: node-rbac.ts ADMIN_KUBECONFIG [KUBECTL] [NAMESPACE]');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-rbac-'));
const kubectl = (args: string[], input?: string) => {
  const r = spawnSync(kubectlPath, ['--kubeconfig', adminKubeconfig, ...args], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const admin = new k8s.KubeConfig();
admin.loadFromFile(adminKubeconfig);
const server = admin.getCurrentCluster()!.server;
const ca = admin.getCurrentCluster()!.caFile!;

/** The Role's rules as `verb resource[.group]` lines. */
function granted(yamlText: string): Set<string> {
  const rights = new Set<string>();
  for (const doc of parseAllDocuments(yamlText) as { toJS(): any }[]) {
    const o = doc.toJS();
    if (o?.kind !== 'Role') continue;
    for (const rule of o.rules)
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs) rights.add(`${verb} ${resource}${group ? `.${group}` : ''}`);
  }
  return rights;
}

const roleText = readFileSync(process.env.ROLE_FILE ?? 'manifests/rbac-verify.yaml', 'utf8').replaceAll(
  'namespace: shop',
  `namespace: ${namespace}`,
);
const role = granted(roleText);
console.log(`role_file: ${process.env.ROLE_FILE ?? 'manifests/rbac-verify.yaml'}`);
console.log(`role_rights: ${[...role].sort().join(', ')}`);
try {
  kubectl(['create', 'namespace', namespace]);
  kubectl(['apply', '-f', '-'], roleText);
  const token = kubectl(['create', 'token', 'termlab-verify', '-n', namespace, '--duration=2h']).trim();
  const direct = join(dir, 'sa.kubeconfig');
  writeFileSync(
    direct,
    `apiVersion: v1\nkind: Config\nclusters: [{name: node, cluster: {server: "${server}", certificate-authority: "${ca}"}}]\nusers: [{name: termlab-verify, user: {token: "${token}"}}]\ncontexts: [{name: sa, context: {cluster: node, user: termlab-verify, namespace: ${namespace}}}]\ncurrent-context: sa\n`,
  );
  const used = new Map<string, Set<string>>();
  const refused = new Set<string>();
  const cases = [
    { name: 'rbac-web', action: 'rollout-restart', service: true },
    { name: 'rbac-del', action: 'delete-pod', service: true },
    // No Service selects its pods: the plan makes a temporary one (create and delete services).
    { name: 'rbac-bare', action: 'rollout-restart', service: false },
  ];
  for (const c of cases) {
    await createApp(admin, namespace, { name: c.name, serviceType: 'ClusterIP', replicas: 2 });
    if (!c.service) await admin.makeApiClient(k8s.CoreV1Api).deleteNamespacedService({ name: c.name, namespace });
    for (const via of c.service ? ['direct', 'proxy'] : ['proxy']) {
      const proxy = via === 'proxy' ? await startApiProxy(server) : null;
      const kubeconfig = proxy ? join(dir, 'proxy.kubeconfig') : direct;
      if (proxy) writeFileSync(kubeconfig, proxy.kubeconfig(token, namespace));
      const r = await runCli([
        'verify',
        `deployment/${c.name}`,
        '--kubeconfig',
        kubeconfig,
        '--action',
        c.action,
        '--yes',
        '--path',
        '/work?ms=200',
        '--output-dir',
        join(dir, `${c.name}-${via}`),
        '-o',
        'json',
      ]);
      await proxy?.stop();
      let s: Record<string, any> = {};
      try {
        s = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1));
      } catch {
        /* printed below */
      }
      console.log(`${c.name}.${via}.exit: ${r.code}`);
      console.log(
        `${c.name}.${via}.verdict: ${s.verdict}; requests: ${s.requests}; failed: ${s.failed}; byCause: ${JSON.stringify(s.byCause)}`,
      );
      if (r.code !== 0 && r.code !== 1)
        console.log(`${c.name}.${via}.stderr: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      for (const q of proxy?.requests ?? []) {
        const right = rbacOf(q);
        if (!right) continue;
        if (!used.has(right)) used.set(right, new Set());
        used.get(right)!.add(c.action + (c.service ? '' : ' (temporary Service)'));
        if (q.status === 403) refused.add(right);
      }
    }
  }
  // Any authenticated user may ask who it is (system:basic-user): no Role needs to grant it.
  const own = new Set(['create selfsubjectreviews.authentication.k8s.io']);
  for (const [right, by] of [...used].sort())
    console.log(
      `used: ${right} (${[...by].join(', ')})${role.has(right) ? '' : own.has(right) ? ' [every user has it]' : ' [NOT IN THE ROLE]'}${refused.has(right) ? ' [refused 403]' : ''}`,
    );
  for (const right of [...role].sort()) if (!used.has(right)) console.log(`granted, never used: ${right}`);
} finally {
  spawnSync(kubectlPath, ['--kubeconfig', adminKubeconfig, 'delete', 'namespace', namespace, '--wait=false'], {
    stdio: 'ignore',
  });
}
