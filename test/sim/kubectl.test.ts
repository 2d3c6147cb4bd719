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

/** kubectl with stdin from a string. */
function kubectlWithInput(args: string[], input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (c: Buffer) => { out += c; });
    child.stderr.on('data', (c: Buffer) => { err += c; });
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

/** A command under a pseudo-terminal (util-linux script), as a student's shell runs it; wait on its output. */
function underTerminal(command: string) {
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => { out += c; for (const wake of waiters) wake(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => { for (const wake of waiters) wake(); resolve(code); }));
  const waitFor = (pattern: RegExp) => new Promise<string>((resolve, reject) => {
    const check = () => {
      if (pattern.test(out)) { waiters.delete(check); resolve(out); }
      else if (child.exitCode !== null) { waiters.delete(check); reject(new Error(`ended without ${pattern}: ${JSON.stringify(out)}`)); }
    };
    waiters.add(check);
    check();
  });
  return { type: (text: string) => child.stdin.write(text), waitFor, exited, output: () => out };
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

  /** A lab pod made with kubectl run, Ready. */
  async function runLabPod(name: string): Promise<void> {
    const created = await kubectl(['run', name, '--image=termlab/lab-server:0.1.0', '--restart=Never', '--port=8080']);
    expect(created).toMatchObject({ code: 0, out: `pod/${name} created\n` });
    expect(await kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=20s'])).toMatchObject({ code: 0 });
  }

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

  it('exec runs a command with stdin and returns its exit code', async () => {
    await runLabPod('poke');
    const result = await kubectlWithInput(['exec', '-i', 'poke', '--', 'sh', '-c', 'cat; echo to-stderr >&2; exit 3'], 'from stdin\n');
    expect(result).toEqual({ code: 3, out: 'from stdin\n', err: 'to-stderr\ncommand terminated with exit code 3\n' });
    expect(await kubectl(['exec', 'poke', '--', 'true'])).toEqual({ code: 0, out: '', err: '' });
    const missing = await kubectl(['exec', 'poke', '--', 'no-such-tool']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('executable file not found in $PATH');
  });

  it('exec -it gives a shell prompt under a terminal, follows its size and returns its exit code', async () => {
    const shell = underTerminal('stty cols 100 rows 30; kubectl exec -it poke -- sh');
    await shell.waitFor(/[#$] $/);
    shell.type('echo $((6*7)); stty size\n');
    await shell.waitFor(/\r\n42\r\n30 100\r\n/);
    shell.type('exit 5\n');
    expect(await shell.exited).toBe(5);
  });
});
