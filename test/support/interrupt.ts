// A real `termlab` process interrupted the way a user does it, for the Ctrl-C tests.
import { spawn } from 'node:child_process';

/**
 * A real `termlab` process, sent Ctrl-C (SIGINT) once its output shows `ready`. `how`: `once` to the CLI;
 * `relayed` to the CLI, then again once it says it is stopping (as tsx relays a Ctrl-C the CLI already got);
 * `group` to the whole process group, as a terminal sends it, with `command` the launcher (npx tsx …) leading it.
 */
export function interruptWhen(
  args: string[],
  cwd: string,
  ready: (stdout: string) => boolean,
  how: 'once' | 'relayed' | 'group' = 'once',
  command = process.execPath,
  signal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: how === 'group' });
  let stdout = '';
  let stderr = '';
  let interrupted = false;
  let relayed = false;
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
    if (how === 'relayed' && interrupted && !relayed && stderr.includes('stopping cleanly')) {
      relayed = true;
      child.kill('SIGINT');
    }
  });
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
    if (interrupted || !ready(stdout)) return;
    interrupted = true;
    if (how === 'group') process.kill(-child.pid!, signal);
    else child.kill(signal);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
