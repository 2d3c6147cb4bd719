// Real child processes for tests: line-by-line JSON events and an exit promise (output complete) to wait on.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface JsonEvent {
  event: string;
  time: string;
  mono: number;
  [key: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface EventedProcess {
  child: ChildProcess;
  events: JsonEvent[];
  rawLines: string[];
  stderr: () => string;
  waitForEvent(match: (e: JsonEvent) => boolean, description: string, timeoutMs?: number): Promise<JsonEvent>;
  exited: Promise<Exit>;
}

/** Runs a TypeScript entry with tsx and collects its stdout JSON lines. */
export function spawnTs(entry: string, args: string[], env: NodeJS.ProcessEnv = {}): EventedProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: JsonEvent[] = [];
  const rawLines: string[] = [];
  const waiters = new Set<() => void>();
  let stderrText = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderrText += chunk.toString();
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    rawLines.push(line);
    events.push(JSON.parse(line) as JsonEvent);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<Exit>((resolve) => {
    // 'close', not 'exit': it comes once stdout and stderr have ended too, so every line and all of stderr are in
    // (readline hands over its last line on stdout's end). After 'exit' the pipes may still hold output.
    child.on('close', (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters) wake();
    });
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  function waitForEvent(match: (e: JsonEvent) => boolean, description: string, timeoutMs = 15_000): Promise<JsonEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = events.find(match);
        if (found) {
          cleanup();
          resolve(found);
          return;
        }
        if (hasExited) {
          cleanup();
          reject(new Error(`process exited before ${description}; stderr: ${stderrText}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${description}; events: ${events.map((e) => e.event).join(',')}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }

  return { child, events, rawLines, stderr: () => stderrText, waitForEvent, exited };
}
