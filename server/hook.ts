// The exec preStop hook: `hook sleep <ms>`. Kubernetes does not keep an exec hook's output,
// so the events go to the container's log: PID 1's stdout inside a container, or the file
// named by LAB_HOOK_LOG elsewhere (the simulated kubelet sets it to the container's log).
import { openSync, writeSync } from 'node:fs';
import { createEventLog } from './events.ts';
import { parseMs, WORK_MS_MAX } from './work.ts';

function fail(message: string): never {
  process.stderr.write(`hook: ${message}\nusage: hook sleep <ms>\n`);
  process.exit(2);
}

const [verb, msText] = process.argv.slice(2);
if (verb !== 'sleep') fail(`unknown command ${JSON.stringify(verb ?? '')}`);
const ms = parseMs(msText ?? null, 0, WORK_MS_MAX);
if (!ms.ok) fail(ms.message);

const target = process.env.LAB_HOOK_LOG || '/proc/1/fd/1';
// The sleep is the hook's job; its log lines are extra evidence. If the container's log cannot
// be opened (a runtime may not let a non-root user reopen PID 1's stdout), say so and still sleep.
let fd: number | null = null;
try {
  fd = openSync(target, 'a');
} catch (error) {
  process.stderr.write(`hook: cannot open the container log ${target}: ${(error as Error).message}; sleeping without logging\n`);
}
const logEvent = createEventLog(
  { podUid: process.env.POD_UID || undefined, podName: process.env.POD_NAME || undefined },
  (line) => { if (fd !== null) writeSync(fd, line); },
);
logEvent('hook-start', { kind: 'exec', ms: ms.value });
setTimeout(() => {
  logEvent('hook-end', { kind: 'exec', ms: ms.value });
}, ms.value);
