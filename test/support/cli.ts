import { spawn } from 'node:child_process';
import { repoRoot } from './processes.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `termlab ...` as a real process through the published entry (bin/termlab.js), the way a user or CI does.
 * `signal` (a test's own, aborted when it times out) kills a process that hangs, so it outlives no test.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/termlab.js', ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(signal ? { signal, killSignal: 'SIGKILL' as const } : {}),
    });
    child.on('error', () => {});
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
