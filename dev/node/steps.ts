// Steps that say what they do and how long they took; a failed one names itself and shows
// the tail of the log that explains it.
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import { paths } from './layout.ts';

/** A step of the node's set-up that could not be done (SETUP_FAILED), with the log that explains it. */
export class StepError extends TermlabError {
  readonly logFile?: string;
  constructor(message: string, logFile?: string, options?: ErrorOptions) {
    super('SETUP_FAILED', message, logFile ? { logFile } : {}, options);
    this.name = 'StepError';
    this.logFile = logFile;
  }
}

/** A system call that failed (EACCES, ENOSPC, a missing file) as the step's failure, not a bug; anything else as it is. */
export function asStepError(error: unknown): unknown {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).errno === 'number'
    ? new StepError(error.message, undefined, { cause: error })
    : error;
}

/** The failures a step has already printed (its ✘ line), so that the tool's last line need not repeat them. */
const printed = new WeakSet<object>();
export const printedByStep = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && printed.has(error);

export const timings: { step: string; seconds: number }[] = [];

export function tail(file: string, lines = 25): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

export async function step<T>(name: string, run: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  console.log(`▶ ${name}`);
  try {
    const result = await run();
    const seconds = (performance.now() - started) / 1000;
    timings.push({ step: name, seconds });
    console.log(`✔ ${name} (${seconds.toFixed(1)}s)`);
    return result;
  } catch (caught) {
    const error = asStepError(caught);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.error(`✘ ${name} failed after ${seconds}s: ${(error as Error).message}`);
    if (error instanceof StepError && error.logFile)
      console.error(`--- last lines of ${error.logFile} ---\n${tail(error.logFile)}\n---`);
    if (typeof error === 'object' && error !== null) printed.add(error);
    throw error;
  }
}

/** Runs a command to completion; a failure carries its output. */
export function sh(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw new StepError(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new StepError(
      `${command} ${args.join(' ')} exited ${result.status}: ${String(result.stderr || result.stdout)
        .trim()
        .split('\n')
        .slice(-15)
        .join('\n')}`,
    );
  }
  return String(result.stdout);
}

/** Starts a long-running component detached, its output in logs/<name>.log, its PID recorded. */
export function startComponent(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { pid: number; log: string } {
  mkdirSync(paths.logs, { recursive: true });
  mkdirSync(paths.pids, { recursive: true });
  const log = join(paths.logs, `${name}.log`);
  // Never overwrite the record of a live component: cluster:down finds processes only through it.
  const pidFile = join(paths.pids, `${name}.pid`);
  const recorded = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
  if (recorded > 0 && alive(recorded))
    throw new StepError(`${name} is already running (pid ${recorded}): run npm run cluster:down first`);
  const fd = openSync(log, 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
  closeSync(fd);
  child.unref();
  if (!child.pid) throw new StepError(`${name} did not start`, log);
  writeFileSync(pidFile, `${child.pid}\n`);
  return { pid: child.pid, log };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until check() is true, the process dies, or the deadline passes. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  component?: { pid: number; log: string },
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (component && !alive(component.pid)) throw new StepError(`${what}: the process exited`, component.log);
    await sleep(250);
  }
  throw new StepError(`${what}: not ready within ${timeoutMs / 1000}s`, component?.log);
}
