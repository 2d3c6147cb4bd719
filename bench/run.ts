// bench:run — the default matrix on the simulated cluster, against the sim's ground truth.
// Targets: the matrix within 1.2x its longest scenario's own duration + 2 s; TERM, hook and kill
// times reconstructed within 20 ms (p95).
import { startSimCluster } from '../cluster/sim/index.ts';
import { predict } from '../harness/grade/theory.ts';
import { connect } from '../harness/kube/index.ts';
import { RunClock } from '../harness/run/clock.ts';
import { runScenario } from '../harness/run/scenario.ts';
import { loadScenarios, loadTemplate } from '../harness/scenario/load.ts';

const sim = await startSimCluster();
const cluster = await connect({ kubeconfigText: sim.kubeconfig });
const scenarios = await loadScenarios();
const template = await loadTemplate();
const clock = new RunClock();
const started = performance.now();
const observations = await Promise.all(scenarios.map((scenario) => runScenario({
  cluster, namespace: 'default', runId: 'run-bench-0000', owner: 'bench', harnessVersion: 'bench', simulated: true, template,
  transport: 'portforward', clock, signal: new AbortController().signal, readyTimeoutMs: 60_000, onPhase: () => {},
}, scenario)));
const matrixSeconds = (performance.now() - started) / 1000;
// A scenario's own duration: the delete delay plus the time until the model says the container exits.
const longest = Math.max(...scenarios.map((s) => s.deleteDelayMs / 1000 + predict(s).exitAt));

const errors: number[] = [];
const hookStartLag: number[] = [];
for (const o of observations) {
  const truth = sim.truth(o.pod!.uid)!;
  const t = o.timeline;
  if (t.termReceived && truth.termSentAt) errors.push(Math.abs(Date.parse(t.termReceived.at.time) - truth.termSentAt));
  if (t.hookEnd?.source === 'container-log' && truth.hookEndAt && !truth.hookTimedOut) errors.push(Math.abs(Date.parse(t.hookEnd.at.time) - truth.hookEndAt));
  if (t.hookStart?.source === 'container-log' && truth.hookStartAt) hookStartLag.push(Date.parse(t.hookStart.at.time) - truth.hookStartAt);
  const killOrExit = truth.killSentAt ?? truth.exitedAt;
  if (t.containerTerminated && killOrExit) errors.push(Math.abs(Date.parse(t.containerTerminated.at.wall) - killOrExit));
}
await sim.stop();
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(values.length * 0.95) - 1)] ?? NaN;
console.log(`matrix_seconds: ${matrixSeconds.toFixed(2)}`);
console.log(`longest_scenario_seconds: ${longest.toFixed(2)}`);
console.log(`matrix_ratio: ${(matrixSeconds / longest).toFixed(3)}`);
console.log(`matrix_budget_ratio: ${((1.2 * longest + 2) / longest).toFixed(3)}`);
console.log(`timing_samples: ${errors.length}`);
console.log(`timing_error_p95_ms: ${p95(errors).toFixed(1)}`);
console.log(`timing_error_max_ms: ${Math.max(...errors).toFixed(1)}`);
console.log(`exec_hook_start_lag_p95_ms: ${p95(hookStartLag).toFixed(1)}`);
