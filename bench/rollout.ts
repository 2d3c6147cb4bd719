// bench:rollout — a rollout under 200 requests/s on the simulated cluster, through its service
// proxy, from the load pod (LAB_MODE=load) the sim's kubelet runs. Targets: 200 requests/s
// sustained, harness_overhead_ms_p95 < 5 (a request's client-side time beyond the server's own work).
import { startSimCluster } from '../cluster/sim/index.ts';
import { parseLoadLog } from '../harness/grade/rollout/records.ts';
import { connect } from '../harness/kube/index.ts';
import { RunClock } from '../harness/run/clock.ts';
import { runRollout } from '../harness/run/rollout.ts';
import { loadScenarioSet, loadTemplate } from '../harness/scenario/load.ts';

const RATE = 200;
const WORK_MS = 20;
const set = await loadScenarioSet('manifests/rollout.yaml', ['rollout-with-prestop']);
if (set.kind !== 'rollout') throw new Error('manifests/rollout.yaml is not a rollout file');
const scenario = { ...set.scenarios[0]!, load: { ...set.scenarios[0]!.load, rate: RATE, workMs: WORK_MS, connections: 64 } };
const sim = await startSimCluster();
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 100);
try {
  const cluster = await connect({ kubeconfigText: sim.kubeconfig });
  const observation = await runRollout({
    cluster, namespace: 'default', runId: 'run-bench-0000', owner: 'bench', harnessVersion: 'bench', simulated: true, template: await loadTemplate(),
    transport: 'direct', clock: new RunClock(), signal: new AbortController().signal, readyTimeoutMs: 60_000, onPhase: () => {},
  }, scenario);
  if (!observation.run.complete) throw new Error(`the rollout did not complete: ${observation.run.incompleteReason}`);
  const records = parseLoadLog(observation.evidence.loadLog).records;
  const completed = records.filter((r) => r.outcome === 'completed');
  const span = (Math.max(...records.map((r) => r.sent.mono)) - Math.min(...records.map((r) => r.sent.mono))) / 1000;
  const overhead = completed.map((r) => r.ended.mono - r.sent.mono - WORK_MS).sort((a, b) => a - b);
  const p95 = overhead[Math.max(0, Math.ceil(overhead.length * 0.95) - 1)] ?? NaN;
  // How far the sends fell behind the steady schedule: a load generator that cannot keep up shows here.
  const lag = records.map((r) => r.sent.mono - r.dueMono).sort((a, b) => a - b);
  console.log(`requests: ${records.length}`);
  console.log(`requests_failed: ${records.length - completed.length}`);
  console.log(`requests_per_s: ${((records.length - 1) / span).toFixed(1)}`);
  console.log(`requests_per_s_target: ${RATE}`);
  console.log(`harness_overhead_ms_p50: ${overhead[Math.floor(overhead.length / 2)]!.toFixed(2)}`);
  console.log(`harness_overhead_ms_p95: ${p95.toFixed(2)}`);
  console.log(`send_lag_ms_p95: ${lag[Math.max(0, Math.ceil(lag.length * 0.95) - 1)]!.toFixed(2)}`);
  console.log(`peak_rss_mb: ${(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1024 / 1024).toFixed(1)}`);
} finally {
  clearInterval(sampler);
  await sim.stop();
}
