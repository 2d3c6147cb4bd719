// bench:server — 1,000 in-flight 2 s requests, SIGTERM after 1 s, graceful mode.
// Targets: 1,000 completed, 0 cut, exit within 200 ms of the last completion, peak RSS < 150 MB.
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { readLines, startLabServer } from '../test/support/labServer.ts';

const REQUESTS = 1000;
const WORK_MS = 2000;
const TERM_AFTER_MS = 1000;

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const lab = await startLabServer('graceful');
const pid = lab.child.pid!;
let peakRss = 0;
const sampler = setInterval(() => {
  try {
    peakRss = Math.max(peakRss, peakRssMb(pid));
  } catch {
    /* exited */
  }
}, 50);
const agent = new Agent({ connections: REQUESTS + 10, pipelining: 1 });
const started = performance.now();
let lastCompletion = 0;
let completed = 0,
  cut = 0,
  rejected = 0;

const runs = Array.from({ length: REQUESTS }, async (_, i) => {
  try {
    const res = await request(`${lab.base}/work?ms=${WORK_MS}&id=b${i}`, { dispatcher: agent });
    if (res.statusCode !== 200) {
      rejected++;
      await res.body.dump();
      return;
    }
    const { lines } = await readLines(res.body);
    if (lines.at(-1)?.event === 'done') {
      completed++;
      lastCompletion = performance.now();
    } else cut++;
  } catch (error) {
    if (cut === 0) console.error('first cut:', error);
    cut++;
  }
});
await lab.waitForEvent(
  () => lab.events.filter((e) => e.event === 'accepted').length === REQUESTS,
  'all accepted',
  30_000,
);
await delay(Math.max(0, TERM_AFTER_MS - (performance.now() - started)));
lab.child.kill('SIGTERM');
const exit = await lab.exited;
const exitedAt = performance.now();
await Promise.all(runs);
clearInterval(sampler);
await agent.close();

console.log(`completed: ${completed}`);
console.log(`cut: ${cut}`);
console.log(`rejected: ${rejected}`);
console.log(`exit_code: ${exit.code}`);
console.log(`exit_after_last_ms: ${Math.round(exitedAt - lastCompletion)}`);
console.log(`peak_rss_mb: ${peakRss.toFixed(1)}`);
