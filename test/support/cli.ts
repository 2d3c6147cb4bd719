import { spawn } from 'node:child_process';
import { join } from 'node:path';
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
  return runCliIn(repoRoot, args, env, signal);
}

/** `termlab ...` run from a folder of the user's own (`cwd`), as a student runs it from their exercise folder. */
export function runCliIn(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  signal?: AbortSignal,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/termlab.js'), ...args], {
      cwd,
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
