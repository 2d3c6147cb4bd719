// The real kubectl against the simulated cluster. .ci/run installs kubectl; elsewhere this skips.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { repoRoot } from '../support/processes.ts';
import { hasKubectl, kubectlPortForward, runKubectl, streamingGet } from '../support/kubectl.ts';

if (!hasKubectl) console.warn('kubectl not found: skipping the kubectl suite (CI installs it)');
// exec speaks WebSocket (v5.channel.k8s.io) from kubectl 1.30 and port-forward tunnels SPDY over
// WebSocket from 1.31; older clients speak plain SPDY, which the sim does not serve.
const WEBSOCKET_KUBECTL_MINOR = 31;
const kubectlMinor = hasKubectl
  ? Number(
      JSON.parse(
        spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).stdout,
      ).clientVersion.minor.replace(/\D+$/, ''),
    )
  : 0;
const speaksWebSockets = kubectlMinor >= WEBSOCKET_KUBECTL_MINOR;
/** A wait still open this long fails with what was seen so far, before the test's own timeout hides it. */
const DIAGNOSE_AFTER_MS = 30_000;
if (hasKubectl && !speaksWebSockets)
  console.warn(`kubectl 1.${kubectlMinor} predates WebSocket exec and port-forward: skipping those tests`);

let sim: SimCluster;
let env: NodeJS.ProcessEnv;
let dir: string;

function kubectl(args: string[], timeoutMs = 20_000) {
  return runKubectl(env, args, timeoutMs);
}

/** kubectl with stdin from a string. */
function kubectlWithInput(args: string[], input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

/** A command under a pseudo-terminal (util-linux script), as a student's shell runs it; wait on its output. */
function underTerminal(command: string) {
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => {
    out += c;
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const diagnose = setTimeout(
        () => reject(new Error(`no ${pattern} yet: ${JSON.stringify(out)}`)),
        DIAGNOSE_AFTER_MS,
      );
      const check = () => {
        if (pattern.test(out)) {
          clearTimeout(diagnose);
          waiters.delete(check);
          resolve(out);
        } else if (child.exitCode !== null) {
          waiters.delete(check);
          reject(new Error(`ended without ${pattern}: ${JSON.stringify(out)}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { type: (text: string) => child.stdin.write(text), waitFor, exited, output: () => out };
}

const portForward = (pod: string, remotePort: number) => kubectlPortForward(env, pod, remotePort);

/** Starts a long-running kubectl and resolves once its output matches. */
function kubectlUntil(args: string[], pattern: RegExp) {
  const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const seen = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c;
      if (pattern.test(out)) resolve(out);
    });
    child.on('close', () =>
      pattern.test(out)
        ? resolve(out)
        : reject(new Error(`kubectl ${args.join(' ')} ended without ${pattern}: ${out}`)),
    );
  });
  return { seen, stop: () => child.kill('SIGTERM'), output: () => out };
}

// The newest minor the simulator emulates (its default) and the oldest one still supported.
describe.skipIf(!hasKubectl).each(['1.37', '1.35'])(
  'kubectl against the simulated cluster (Kubernetes %s)',
  (kubeVersion) => {
    beforeAll(async () => {
      sim = await startSimCluster({ kubeVersion });
      dir = mkdtempSync(join(tmpdir(), 'termlab-kubectl-'));
      writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
      env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
      writeFileSync(
        join(dir, 'pod.yaml'),
        `apiVersion: v1
kind: Pod
metadata:
  name: from-kubectl
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: lab
    image: termlab/lab-server:0.1.0
    readinessProbe: { httpGet: { path: /readyz, port: 8080 }, periodSeconds: 1 }
`,
      );
    });
    afterAll(async () => {
      await sim?.stop();
    });

    /** A lab pod made with kubectl run, Ready. */
    async function runLabPod(name: string): Promise<void> {
      const created = await kubectl([
        'run',
        name,
        '--image=termlab/lab-server:0.1.0',
        '--restart=Never',
        '--port=8080',
      ]);
      expect(created).toMatchObject({ code: 0, out: `pod/${name} created\n` });
      expect(await kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=20s'])).toMatchObject({
        code: 0,
      });
      // Ready could come from another sim's pod on the same loopback address (until pods stop owning
      // 127.0.0.x); the pod's own log says whether its server is the one listening.
      const log = kubectlUntil(['logs', '-f', name], /"event":"listening"|cannot listen/);
      const started = await log.seen;
      log.stop();
      expect(started, `${name}'s server did not start`).toMatch(/"event":"listening"/);
    }

    it('reports the minor it emulates to kubectl version', async () => {
      const version = await kubectl(['version', '-o', 'json']);
      expect(version.code, version.err).toBe(0);
      expect(JSON.parse(version.out).serverVersion).toMatchObject({ major: '1', minor: kubeVersion.split('.')[1] });
    });

    it('creates, watches, follows the log of, and deletes a pod; lists events and nodes', async () => {
      expect(await kubectl(['create', '-f', join(dir, 'pod.yaml')])).toMatchObject({
        code: 0,
        out: 'pod/from-kubectl created\n',
      });
      const watch = kubectlUntil(['get', 'pods', '-w'], /from-kubectl\s+0\/1\s+Completed/);
      await kubectlUntil(['get', 'pods', '-w'], /from-kubectl\s+1\/1\s+Running/).seen;
      // Only a started container has a log to follow (before, kubectl is told it is waiting to start).
      const logs = kubectlUntil(['logs', '-f', 'from-kubectl'], /"event":"exit"/);
      expect((await kubectl(['get', 'nodes'])).out).toMatch(/termlab-sim-node\s+Ready/);
      const deleted = await kubectl(['delete', 'pod', 'from-kubectl', '--grace-period=3']);
      // kubectl 1.34 names the namespace; earlier ones do not.
      expect(deleted).toMatchObject({
        code: 0,
        out: expect.stringMatching(/^pod "from-kubectl" deleted( from default namespace)?\n$/),
      });
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

    it.runIf(speaksWebSockets)('exec runs a command with stdin and returns its exit code', async () => {
      await runLabPod('poke');
      const result = await kubectlWithInput(
        ['exec', '-i', 'poke', '--', 'sh', '-c', 'cat; echo to-stderr >&2; exit 3'],
        'from stdin\n',
      );
      expect(result).toEqual({ code: 3, out: 'from stdin\n', err: 'to-stderr\ncommand terminated with exit code 3\n' });
      expect(await kubectl(['exec', 'poke', '--', 'true'])).toEqual({ code: 0, out: '', err: '' });
      const missing = await kubectl(['exec', 'poke', '--', 'no-such-tool']);
      expect(missing.code).toBe(1);
      expect(missing.err).toContain('executable file not found in $PATH');
    });

    it.runIf(speaksWebSockets)(
      'exec -it gives a shell prompt under a terminal, follows its size and returns its exit code',
      async () => {
        const shell = underTerminal('stty cols 100 rows 30; kubectl exec -it poke -- sh');
        await shell.waitFor(/[#$] $/);
        shell.type('echo $((6*7)); stty size\n');
        await shell.waitFor(/\r\n42\r\n30 100\r\n/);
        shell.type('exit 5\n');
        expect(await shell.exited).toBe(5);
      },
    );

    it.runIf(speaksWebSockets)(
      'port-forward carries a streaming request until the kubelet kills the container',
      async () => {
        await runLabPod('streamer');
        const forward = portForward('streamer', 8080);
        const request = streamingGet(await forward.localPort, '/work?ms=60000');
        await request.waitForLine(/"event":"progress"/).catch(async (error: Error) => {
          throw new Error(
            `${error.message}; kubectl: ${forward.stderr()}; the pod's log: ${(await kubectl(['logs', 'streamer'])).out}`,
          );
        });
        const uid = (await kubectl(['get', 'pod', 'streamer', '-o', 'jsonpath={.metadata.uid}'])).out;
        expect(await kubectl(['delete', 'pod', 'streamer', '--grace-period=1', '--wait=false'])).toMatchObject({
          code: 0,
        });
        // The graceful server holds the request past its TERM; the kill at the end of the grace cuts it.
        expect(await request.ended).toBe('cut');
        expect(request.lines.some((l) => l.includes('"event":"done"'))).toBe(false);
        // The cut reaches the client as the socket closes; the kubelet records the exit just after, and the
        // kill's time once its watchdog process has closed, which may be later still on a busy machine.
        await expect.poll(() => sim.truth(uid)?.killSentAt).toBeDefined();
        const truth = sim.truth(uid);
        expect(truth?.exitCode).toBe(137);
        expect(truth?.termSentAt).toBeDefined();
        forward.stop();
        await forward.exited;
      },
    );

    it.runIf(speaksWebSockets)(
      'port-forward to a port nobody listens on reports the refusal as the API server does',
      async () => {
        await runLabPod('refuser');
        const uid = (await kubectl(['get', 'pod', 'refuser', '-o', 'jsonpath={.metadata.uid}'])).out;
        const forward = portForward('refuser', 9999);
        const request = streamingGet(await forward.localPort, '/');
        expect(await request.ended).toBe('cut');
        // kubectl gives up the whole forward after an error on the error stream.
        expect(await forward.exited).toBe(1);
        expect(forward.stderr()).toContain(`an error occurred forwarding`);
        expect(forward.stderr()).toContain(
          `-> 9999: error forwarding port 9999 to pod ${uid}, uid : failed to connect to localhost:9999 inside the pod: `,
        );
        expect(forward.stderr()).toMatch(/connect: connection refused/);
        expect(forward.stderr()).toContain('error: lost connection to pod');
      },
    );
  },
);

describe.skipIf(!hasKubectl)('termlab sim', () => {
  it('writes a kubeconfig only its owner can read and prints kubectl lines that work with it', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'termlab-sim-cli-')), 'private');
    const kubeconfig = join(folder, 'kubeconfig');
    const child = spawn(process.execPath, ['bin/termlab.js', 'sim', '--kubeconfig-out', kubeconfig], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c;
        if (out.includes('Ctrl-C to stop.')) resolve();
      });
      void exited.then(() => reject(new Error(`termlab sim ended: ${out}`)));
    });
    expect(out).toContain(`  export KUBECONFIG=${kubeconfig}\n`);
    for (const line of [
      'kubectl get pods -w',
      'kubectl port-forward pod/poke 18080:8080',
      'kubectl exec poke -- ls',
      'kubectl exec -it poke -- sh',
    ]) {
      expect(out).toContain(`  ${line}`);
    }
    expect({ file: statSync(kubeconfig).mode & 0o777, folder: statSync(folder).mode & 0o777 }).toEqual({
      file: 0o600,
      folder: 0o700,
    });
    const nodes = spawnSync('kubectl', ['get', 'nodes'], {
      env: { ...process.env, KUBECONFIG: kubeconfig, HOME: folder },
      encoding: 'utf8',
    });
    expect(nodes.stdout).toMatch(/termlab-sim-node\s+Ready/);
    child.kill('SIGINT');
    await exited;
    expect(out).toContain('simulated cluster stopped');
  });
});
