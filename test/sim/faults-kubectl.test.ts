// The simulated API server's faults as the real kubectl meets them: an outage cuts (or a stall
// holds) every connection, port-forward streams, followed logs and watches included, as a real
// kube-apiserver's death does; a port-forward reset cuts the streams alone. .ci/run installs kubectl.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { hasKubectl, kubectlPortForward, runKubectl, streamingGet } from '../support/kubectl.ts';

let sim: SimCluster;
let env: NodeJS.ProcessEnv;

const kubectl = (args: string[], timeoutMs = 20_000) => runKubectl(env, args, timeoutMs);

/** A long-running kubectl whose output is kept; `ended` resolves with its exit code. */
function kubectlLong(args: string[]) {
  const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => {
    out += c;
    for (const wake of waiters) wake();
  });
  child.stderr.on('data', (c: Buffer) => {
    out += c;
  });
  const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
  const seen = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(out)) {
          waiters.delete(check);
          resolve();
        }
      };
      waiters.add(check);
      check();
      void ended.then(() => {
        if (!pattern.test(out)) reject(new Error(`kubectl ${args.join(' ')} ended without ${pattern}: ${out}`));
      });
    });
  return { seen, ended, stop: () => child.kill('SIGTERM'), output: () => out };
}

async function runLabPod(name: string): Promise<void> {
  expect(
    await kubectl(['run', name, '--image=termlab/lab-server:0.1.0', '--restart=Never', '--port=8080']),
  ).toMatchObject({ code: 0 });
  expect(await kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=20s'])).toMatchObject({ code: 0 });
  // Ready alone may come before this pod's own server listens (as in kubectl.test.ts): its log says.
  const log = kubectlLong(['logs', '-f', name]);
  await log.seen(/"event":"listening"|cannot listen/);
  log.stop();
  expect(log.output(), `${name}'s server did not start`).toMatch(/"event":"listening"/);
}

/** The API answers again (after an outage): polled with kubectl itself. */
async function apiBack(): Promise<void> {
  await expect
    .poll(async () => (await kubectl(['get', '--raw', '/readyz'], 5_000)).out, { timeout: 20_000, interval: 200 })
    .toBe('ok');
}

/** A port-forward with a long request in flight on it, once the server is streaming. */
async function requestInFlight(pod: string) {
  const forward = kubectlPortForward(env, pod, 8080);
  const request = streamingGet(await forward.localPort, `/work?ms=60000&id=${pod}`);
  await request.waitForLine(/"event":"progress"/).catch(async (error: Error) => {
    throw new Error(
      `${error.message}; kubectl: ${forward.stderr()}; the pod's log: ${(await kubectl(['logs', pod])).out}`,
    );
  });
  return { forward, request };
}

describe.skipIf(!hasKubectl)('API faults as kubectl meets them', () => {
  beforeAll(async () => {
    sim = await startSimCluster();
    const dir = mkdtempSync(join(tmpdir(), 'termlab-faults-kubectl-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('refuse-connections cuts a request in flight over kubectl port-forward, a followed log and a watch; the pod saw its client go', async () => {
    await runLabPod('crash');
    const { forward, request } = await requestInFlight('crash');
    const logs = kubectlLong(['logs', '-f', 'crash']);
    await logs.seen(/"event":"accepted"/);
    const watch = kubectlLong(['get', 'pods', '-w']);
    await watch.seen(/crash\s+1\/1\s+Running/);
    sim.fault({ fault: 'refuse-connections', seconds: 2 });
    expect(await request.ended).toBe('cut');
    expect(request.lines.some((l) => l.includes('"event":"done"'))).toBe(false);
    // kubectl's own streams end with the API: none of them outlives the server it rode on.
    expect(await forward.exited).not.toBe(0);
    expect(forward.stderr()).toContain('lost connection to pod');
    await logs.ended;
    await watch.ended;
    await apiBack();
    // The kubelet carried on: the pod is running, and its server logged the client gone.
    expect((await kubectl(['get', 'pod', 'crash', '-o', 'jsonpath={.status.phase}'])).out).toBe('Running');
    expect((await kubectl(['logs', 'crash'])).out).toMatch(/"event":"aborted".*"id":"crash"/);
  });

  it('stall-requests holds a request in flight over kubectl port-forward: nothing flows until the stall ends', async () => {
    await runLabPod('stopped');
    const { forward, request } = await requestInFlight('stopped');
    let linesAtRelease = -1;
    sim.faultEvents.once('released', () => {
      linesAtRelease = request.lines.length;
    });
    const linesAtStall = request.lines.length;
    sim.fault({ fault: 'stall-requests', seconds: 2 });
    const released = new Promise<void>((resolve) => sim.faultEvents.once('released', () => resolve()));
    await released;
    // Not one line crossed the stalled API, though the pod's server kept writing.
    expect(linesAtRelease).toBe(linesAtStall);
    // What it held then flows: the same request, still alive.
    const before = request.lines.length;
    await expect.poll(() => request.lines.length, { timeout: 10_000 }).toBeGreaterThan(before);
    forward.stop();
    await forward.exited;
    expect(await request.ended).toBe('cut');
  });

  it('reset-port-forwards cuts the request in flight; the API stays up', async () => {
    await runLabPod('blip');
    const { forward, request } = await requestInFlight('blip');
    expect(sim.fault({ fault: 'reset-port-forwards' })).toBe('reset 1 port-forward stream(s)');
    expect(await request.ended).toBe('cut');
    expect(await forward.exited).not.toBe(0);
    expect(forward.stderr()).toContain('lost connection to pod');
    expect((await kubectl(['get', '--raw', '/readyz'])).out).toBe('ok');
    await expect
      .poll(async () => (await kubectl(['logs', 'blip'])).out, { timeout: 10_000 })
      .toMatch(/"event":"aborted".*"id":"blip"/);
  });
});
