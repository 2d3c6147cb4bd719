// Running the real kubectl against a cluster in tests: found or not, and one command to its end.
import { spawn, spawnSync } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { createInterface } from 'node:readline';

export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

export interface KubectlResult {
  code: number | null;
  out: string;
  err: string;
}

/** One kubectl command with this environment (its KUBECONFIG); ended by SIGTERM after timeoutMs. */
export function runKubectl(env: NodeJS.ProcessEnv, args: string[], timeoutMs: number): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** kubectl port-forward to a local port it picks; resolves with that port once it forwards. */
export function kubectlPortForward(env: NodeJS.ProcessEnv, pod: string, remotePort: number) {
  const child = spawn('kubectl', ['port-forward', `pod/${pod}`, `:${remotePort}`], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '',
    err = '';
  child.stderr.on('data', (c: Buffer) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const localPort = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c;
      const m = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(() => reject(new Error(`kubectl port-forward ended: ${out}${err}`)));
  });
  return { localPort, exited, stderr: () => err, stop: () => child.kill('SIGTERM') };
}

/** A GET whose body streams; resolves its lines as they come and how the response ended. */
export function streamingGet(port: number, path: string) {
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let hasEnded = false;
  const ended = new Promise<'complete' | 'cut'>((resolve) => {
    const req = httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      // A connection cut mid-body is this test's expected outcome, not an error to throw (readline
      // re-emits the response's error).
      res.on('error', () => {});
      createInterface({ input: res })
        .on('line', (line) => {
          lines.push(line);
          for (const wake of waiters) wake();
        })
        .on('error', () => {});
      res.on('close', () => resolve(res.complete ? 'complete' : 'cut'));
    });
    req.on('error', () => resolve('cut'));
  });
  void ended.then(() => {
    hasEnded = true;
    for (const wake of waiters) wake();
  });
  const waitForLine = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => pattern.test(l));
        if (line) {
          waiters.delete(check);
          resolve(line);
        } else if (hasEnded) {
          waiters.delete(check);
          reject(new Error(`the response ended without ${pattern}: ${lines.join('\n')}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { lines, ended, waitForLine };
}
