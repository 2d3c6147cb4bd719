// `termlab verify`'s edges, each through a real CLI process: bad input (exit 2), a missing right named
// in the error (exit 3), and a run killed outright (kill -9) or stopped by Ctrl-C leaving nothing
// that `termlab reap` does not remove.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';
import { createApp } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-safety-'));

describe.concurrent('termlab verify: bad input', () => {
  it.each([
    [['verify'], /verify needs one target, deployment\/NAME/],
    [['verify', 'pod/web'], /expected deployment\/NAME/],
    [['verify', 'deployment/Web_1'], /not a valid Deployment name/],
    [['verify', 'deployment/web', '--action', 'scale'], /--action: expected rollout-restart or delete-pod/],
    [['verify', 'deployment/web', '--rate', '0'], /--rate: expected a whole number 1-10000/],
    [['verify', 'deployment/web', '--path', 'work'], /--path: expected a path/],
  ])('%j exits 2 naming the mistake', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('termlab verify: a right the user lacks', () => {
  let server: Server;
  let kubeconfig: string;
  beforeAll(async () => {
    // An API server that knows its version and forbids the rest, as RBAC answers.
    server = createServer((req, res) => {
      const body = req.url?.startsWith('/version')
        ? { major: '1', minor: '37', gitVersion: 'v1.37.2' }
        : {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Forbidden',
            code: 403,
            message: `deployments.apps "web" is forbidden: User "dev" cannot get resource "deployments" in API group "apps" in the namespace "shop"`,
          };
      res.writeHead(req.url?.startsWith('/version') ? 200 : 403, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    kubeconfig = join(dir, 'forbidden-kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]\ncurrent-context: x\n`,
    );
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('names the verb, resource and namespace, and exits 3', async () => {
    const r = await runCli(['verify', 'deployment/web', '--kubeconfig', kubeconfig, '--yes']);
    expect(r.stderr).toMatch(/forbidden: cannot get deployments in namespace shop/);
    expect(r.code).toBe(3);
  });
});

describe('termlab verify: stopped midway', () => {
  let sim: SimCluster;
  let kc: k8s.KubeConfig;
  const kubeconfig = join(dir, 'kubeconfig');
  beforeAll(async () => {
    sim = await startSimCluster();
    writeFileSync(kubeconfig, sim.kubeconfig);
    kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    // An app for each case, so that the two run side by side (each run restarts its app's rollout).
    await Promise.all([
      createApp(kc, 'default', { name: 'web-c', preStopSleep: 3, serviceType: 'ClusterIP' }),
      createApp(kc, 'default', { name: 'web-k', preStopSleep: 3, serviceType: 'ClusterIP' }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await sim?.stop();
  });

  /** A real verify process (the CLI's published entry), sent `signal` once its progress says it is rolling out. */
  function stopWhenRolling(
    name: string,
    owner: string,
    signal: NodeJS.Signals,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'verify',
        `deployment/${name}`,
        '--kubeconfig',
        kubeconfig,
        '--path',
        '/work?ms=200',
        '--owner',
        owner,
        '--output-dir',
        join(dir, name),
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let sent = false;
    child.stdout.resume();
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      if (!sent && stderr.includes('rolling out')) {
        sent = true;
        child.kill(signal);
      }
    });
    return new Promise((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig, stderr })));
  }

  const ours = async (owner: string) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const q = { namespace: 'default', labelSelector: `termlab.io/owner=${owner}` };
    const [pods, services] = await Promise.all([core.listNamespacedPod(q), core.listNamespacedService(q)]);
    return [
      ...pods.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `pod/${p.metadata!.name}`),
      ...services.items.map((s) => `service/${s.metadata!.name}`),
    ];
  };

  it.concurrent('Ctrl-C: cleans up its load pod and temporary Service and exits 130', async () => {
    const r = await stopWhenRolling('web-c', 'stopper-c', 'SIGINT');
    expect(r.code, r.stderr).toBe(130);
    expect(await ours('stopper-c')).toEqual([]);
  }, 180_000);

  it.concurrent('kill -9: the load pod and temporary Service are left, and `termlab reap` removes them', async () => {
    const r = await stopWhenRolling('web-k', 'stopper-k', 'SIGKILL');
    expect(r.signal).toBe('SIGKILL');
    const left = await ours('stopper-k');
    expect(left.some((o) => o.startsWith('pod/termlab-verify-load-'))).toBe(true);
    expect(left.some((o) => o.startsWith('service/termlab-verify-web-k-'))).toBe(true);
    const reaped = await runCli(['reap', '--kubeconfig', kubeconfig, '--owner', 'stopper-k']);
    expect(reaped.code, reaped.stderr).toBe(0);
    expect(await ours('stopper-k')).toEqual([]);
  }, 180_000);
});
