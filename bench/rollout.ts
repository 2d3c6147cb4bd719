// bench:rollout — a rollout under 200 requests/s on the simulated cluster, through its service
// proxy, from the load pod (LAB_MODE=load) the sim's kubelet runs. Targets: 200 requests/s
// sustained, harness_overhead_ms_p95 < 5.
// What the figures measure (and what not), all from the load pod's own log and clock:
// - requests, requests_failed, requests_per_s: what the load pod sent over the run and how many did
//   not complete; requests_per_s is over the span of the sends, so it shows a generator that cannot
//   keep up, not the server's or the proxy's capacity.
// - harness_overhead_ms_p50/p95: a completed request's time beyond the server's own work (WORK_MS):
//   connect, the sim's proxy, the server's answer and the body, as the load pod saw them. Not the
//   harness's timing error (bench:run) and not a real node's kube-proxy.
// - send_lag_ms_p95: how far sends fell behind the steady schedule (the load pod's event loop).
// - connect_ms_p95, headers_ms_p95, body_beyond_work_ms_p95: the overhead split into its stages.
// - peak_rss_mb: this process (the harness's runner and its watches), not the sim or the pods.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseLoadLog } from '../harness/grade/rollout/records.ts';
import { connect } from '../harness/kube/index.ts';
import { RunClock } from '../harness/run/clock.ts';
import { runRollout } from '../harness/run/rollout.ts';
import { loadScenarioSet, loadTemplate } from '../harness/scenario/load.ts';
import { percentile } from './stats.ts';

const RATE = 200;
const WORK_MS = 20;
const set = await loadScenarioSet('manifests/rollout.yaml', ['rollout-with-prestop']);
if (set.kind !== 'rollout') throw new Error('manifests/rollout.yaml is not a rollout file');
const scenario = {
  ...set.scenarios[0]!,
  load: { ...set.scenarios[0]!.load, rate: RATE, workMs: WORK_MS, connections: 64 },
};
const dir = mkdtempSync(join(tmpdir(), 'termlab-bench-rollout-'));
const kubeconfig = join(dir, 'kubeconfig');
const sim = spawn(process.execPath, ['bin/termlab.js', 'sim', '--port', '0', '--kubeconfig-out', kubeconfig], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = createInterface({ input: sim.stdout! });
for await (const line of lines) if (line.startsWith('simulated cluster listening')) break;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 100);
try {
  const cluster = await connect({ kubeconfigText: readFileSync(kubeconfig, 'utf8') });
  const observation = await runRollout(
    {
      cluster,
      namespace: 'default',
      runId: 'run-bench-0000',
      owner: 'bench',
      harnessVersion: 'bench',
      simulated: true,
      template: await loadTemplate(),
      transport: 'direct',
      clock: new RunClock(),
      signal: new AbortController().signal,
      readyTimeoutMs: 60_000,
      onPhase: () => {},
    },
    scenario,
  );
  if (!observation.run.complete) throw new Error(`the rollout did not complete: ${observation.run.incompleteReason}`);
  // BENCH_OUT=FILE keeps the observation, to see where the time went.
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, JSON.stringify(observation));
  const records = parseLoadLog(observation.evidence.loadLog).records;
  const completed = records.filter((r) => r.outcome === 'completed');
  const span = (Math.max(...records.map((r) => r.sent.mono)) - Math.min(...records.map((r) => r.sent.mono))) / 1000;
  const overhead = completed.map((r) => r.ended.mono - r.sent.mono - WORK_MS);
  // How far the sends fell behind the steady schedule: a load generator that cannot keep up shows here.
  const lag = records.map((r) => r.sent.mono - r.dueMono);
  console.log(`requests: ${records.length}`);
  console.log(`requests_failed: ${records.length - completed.length}`);
  console.log(`requests_per_s: ${((records.length - 1) / span).toFixed(1)}`);
  console.log(`requests_per_s_target: ${RATE}`);
  console.log(`harness_overhead_ms_p50: ${percentile(overhead, 0.5).toFixed(2)}`);
  console.log(`harness_overhead_ms_p95: ${percentile(overhead, 0.95).toFixed(2)}`);
  console.log(`send_lag_ms_p95: ${percentile(lag, 0.95).toFixed(2)}`);
  // Where the overhead goes: waiting for a socket and connecting, the answer's headers, the body past the work.
  const pct = (values: number[]) => percentile(values, 0.95).toFixed(2);
  console.log(`connect_ms_p95: ${pct(completed.map((r) => r.connectedAt!.mono - r.sent.mono))}`);
  console.log(`headers_ms_p95: ${pct(completed.map((r) => r.headersAt!.mono - r.connectedAt!.mono))}`);
  console.log(`body_beyond_work_ms_p95: ${pct(completed.map((r) => r.ended.mono - r.headersAt!.mono - WORK_MS))}`);
  console.log(`peak_rss_mb: ${(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1024 / 1024).toFixed(1)}`);
} finally {
  clearInterval(sampler);
  sim.kill('SIGINT');
  await once(sim, 'exit');
  rmSync(dir, { recursive: true, force: true });
}
