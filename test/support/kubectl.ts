// Running the real kubectl against a cluster in tests: found or not, and one command to its end.
import { spawn, spawnSync } from 'node:child_process';

export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

export interface KubectlResult { code: number | null; out: string; err: string }

/** One kubectl command with this environment (its KUBECONFIG); ended by SIGTERM after timeoutMs. */
export function runKubectl(env: NodeJS.ProcessEnv, args: string[], timeoutMs: number): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (c: Buffer) => { out += c; });
    child.stderr.on('data', (c: Buffer) => { err += c; });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}
