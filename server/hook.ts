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
let fd: number;
try {
  fd = openSync(target, 'a');
} catch (error) {
  fail(`cannot open the container log ${target}: ${(error as Error).message}`);
}
const logEvent = createEventLog(
  { podUid: process.env.POD_UID || undefined, podName: process.env.POD_NAME || undefined },
  (line) => { writeSync(fd, line); },
);
logEvent('hook-start', { kind: 'exec', ms: ms.value });
setTimeout(() => {
  logEvent('hook-end', { kind: 'exec', ms: ms.value });
}, ms.value);
