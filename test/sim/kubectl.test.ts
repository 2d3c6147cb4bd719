// The real kubectl against the simulated cluster. .ci/run installs kubectl; elsewhere this skips.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
if (!hasKubectl) console.warn('kubectl not found: skipping the kubectl suite (CI installs it)');

let sim: SimCluster;
let env: NodeJS.ProcessEnv;
let dir: string;

function kubectl(args: string[], timeoutMs = 20_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (c: Buffer) => { out += c; });
    child.stderr.on('data', (c: Buffer) => { err += c; });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

/** Starts a long-running kubectl and resolves once its output matches. */
function kubectlUntil(args: string[], pattern: RegExp) {
  const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const seen = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => { out += c; if (pattern.test(out)) resolve(out); });
    child.on('close', () => (pattern.test(out) ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')} ended without ${pattern}: ${out}`))));
  });
  return { seen, stop: () => child.kill('SIGTERM'), output: () => out };
}

describe.skipIf(!hasKubectl)('kubectl against the simulated cluster', () => {
  beforeAll(async () => {
    sim = await startSimCluster();
    dir = mkdtempSync(join(tmpdir(), 'termlab-kubectl-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
    writeFileSync(join(dir, 'pod.yaml'), `apiVersion: v1
kind: Pod
metadata:
  name: from-kubectl
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: lab
    image: termlab/lab-server:0.1.0
    readinessProbe: { httpGet: { path: /readyz, port: 8080 }, periodSeconds: 1 }
`);
  });
  afterAll(async () => { await sim?.stop(); });

  it('creates, watches, follows the log of, and deletes a pod; lists events and nodes', async () => {
    expect(await kubectl(['create', '-f', join(dir, 'pod.yaml')])).toMatchObject({ code: 0, out: 'pod/from-kubectl created\n' });
    const watch = kubectlUntil(['get', 'pods', '-w'], /from-kubectl\s+0\/1\s+Completed/);
    const logs = kubectlUntil(['logs', '-f', 'from-kubectl'], /"event":"exit"/);
    await kubectlUntil(['get', 'pods', '-w'], /from-kubectl\s+1\/1\s+Running/).seen;
    expect((await kubectl(['get', 'nodes'])).out).toMatch(/termlab-sim-node\s+Ready/);
    const deleted = await kubectl(['delete', 'pod', 'from-kubectl', '--grace-period=3']);
    expect(deleted).toMatchObject({ code: 0, out: 'pod "from-kubectl" deleted\n' });
    expect(await watch.seen).toMatch(/Terminating/);
    const logText = await logs.seen;
    expect(logText).toContain('"signal":"SIGTERM"');
    const events = await kubectl(['get', 'events']);
    expect(events.out).toMatch(/Killing\s+pod\/from-kubectl\s+Stopping container lab/);
    watch.stop();
    logs.stop();
    const missing = await kubectl(['get', 'pod', 'from-kubectl']);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('pods "from-kubectl" not found');
  });
});
