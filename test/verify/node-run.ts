// `termlab verify` on the real node through its kube-proxy (not a vitest file: run it under the
// node's lock, `flock /work/node.lock npx tsx test/verify/node-run.ts KUBECONFIG [NAMESPACE]`).
// It makes the same four Deployments as test/verify/sim.test.ts through the API, verifies each with
// --yes, regrades each saved file offline, prints `name: value` lines, and deletes what it made.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { runCli } from '../support/cli.ts';
import { type AppOptions, createApp } from './support.ts';

const [kubeconfig, namespace = 'termlab'] = process.argv.slice(2);
if (!kubeconfig) { console.error('usage: node-run.ts KUBECONFIG [NAMESPACE]'); process.exit(2); }
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const core = kc.makeApiClient(k8s.CoreV1Api);
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-node-'));

const cases: { app: AppOptions; args: string[]; expect: string }[] = [
  { app: { name: 'verify-web', serviceType: 'ClusterIP' }, args: ['--path', '/work?ms=200'], expect: 'exit 1, cause 1, preStop advice' },
  { app: { name: 'verify-web-hook', preStopSleep: 5, serviceType: 'ClusterIP' }, args: ['--path', '/work?ms=200'], expect: 'exit 0, 0 failed' },
  { app: { name: 'verify-web-imm', mode: 'immediate', serviceType: 'ClusterIP' }, args: ['--path', '/work?ms=2000', '--rate', '20'], expect: 'exit 1, cause 2' },
  { app: { name: 'verify-web-del', serviceType: 'ClusterIP' }, args: ['--action', 'delete-pod', '--path', '/work?ms=200'], expect: 'one pod deleted' },
];
const only = process.env.ONLY?.split(',');

try {
  for (const c of cases.filter((x) => !only || only.includes(x.app.name))) {
    await createApp(kc, namespace, c.app);
    const r = await runCli(['verify', `deployment/${c.app.name}`, '--kubeconfig', kubeconfig, '--namespace', namespace, '--yes', '--out', join(dir, c.app.name), '--json', ...c.args]);
    const json = r.stdout.slice(r.stdout.indexOf('\n{') + 1);
    let s: Record<string, any> = {};
    try { s = JSON.parse(json); } catch { console.log(r.stdout, r.stderr); }
    const offline = await runCli(['grade', String(s.observation), '--json']);
    const g = JSON.parse(offline.stdout || '{}');
    console.log(`${c.app.name}.expected: ${c.expect}`);
    console.log(`${c.app.name}.exit: ${r.code}`);
    console.log(`${c.app.name}.verdict: ${s.verdict} (offline: ${g.verdict}, exit ${offline.code})`);
    console.log(`${c.app.name}.requests: ${s.requests}; failed: ${s.failed}; byCause: ${JSON.stringify(s.byCause)}; terminations: ${g.terminations}`);
    for (const a of s.advice ?? []) console.log(`${c.app.name}.advice: ${a}`);
    for (const a of s.reasoning ?? []) console.log(`${c.app.name}.because: ${a}`);
    console.log(`${c.app.name}.observation: ${s.observation}`);
    if (r.code !== 0 && r.code !== 1) console.log(r.stderr);
  }
} finally {
  for (const c of cases) {
    await apps.deleteNamespacedDeployment({ name: c.app.name, namespace }).catch(() => {});
    await core.deleteNamespacedService({ name: c.app.name, namespace }).catch(() => {});
  }
}
