// bench:run — the default matrix on the simulated cluster, all at once, against the sim's ground truth.
// What the figures measure (and what not):
// - harness_error_p95_ms (target ≤ 10): each time the harness reconstructs against the sim's record
//   of when that source published it: a container's end and the pod's removal as seen on the watch
//   against the moment the store wrote them; TERM and the hook's end from the lab's log lines against
//   the moment the sim's runtime took that line in (its timestamps=true stamp, the kubelet's record of
//   the line). It is the harness's own error, not how late Kubernetes tells (that is the sources'
//   latency below). Until 2026-12-03 a log line was held against the kubelet's TERM or the hook's exit,
//   which is the signal's delivery and the hook's last write: now source_latency_ms_term_line and
//   source_latency_ms_hook_end_line.
// - source_latency_ms_*: how late each source tells what happened, from the sim's truth alone (the
//   process died → the status said so; the status said so → the pod was gone; the kubelet launched
//   the hook → the hook's first line; the kubelet sent TERM → the server's line says it got it; the
//   hook's end line → the kubelet saw the hook exit), printed beside the real node's figures from the fidelity
//   record (reports/fidelity/v1.N/node.json, the newest minor). A property of the simulated kubelet, not a target here.
// - matrix_ratio (target ≤ 1.10): the matrix's wall time over its longest scenario's own life as the
//   sim recorded it (pod created → pod gone): what running the matrix in parallel costs. Not the
//   model's exit time, which leaves out the kubelet's own reaction to a delete.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SideFileSchema, type SideFile } from '../dev/fidelity/summary.ts';
import { startSimCluster } from '../cluster/sim/index.ts';
import { predict } from '../harness/grade/theory.ts';
import { connect } from '../harness/kube/index.ts';
import { RunClock } from '../harness/run/clock.ts';
import { runScenario } from '../harness/run/scenario.ts';
import { loadScenarios, loadTemplate } from '../harness/scenario/load.ts';
import { percentile } from './stats.ts';

// The fidelity record of the newest minor the node ran (reports/fidelity/v1.N/node.json, as dev/fidelity/run.ts writes it).
const NODE_RECORD = (() => {
  const minors = (existsSync('reports/fidelity') ? readdirSync('reports/fidelity') : [])
    .map((d) => /^v1\.(\d+)$/.exec(d)?.[1])
    .filter((m): m is string => m !== undefined)
    .map(Number);
  const newest = minors.filter((m) => existsSync(`reports/fidelity/v1.${m}/node.json`)).sort((a, b) => b - a)[0];
  return newest === undefined ? null : `reports/fidelity/v1.${newest}/node.json`;
})();

const sim = await startSimCluster();
const cluster = await connect({ kubeconfigText: sim.kubeconfig });
const scenarios = await loadScenarios();
const template = await loadTemplate();
const clock = new RunClock();
const started = performance.now();
const observations = await Promise.all(
  scenarios.map((scenario) =>
    runScenario(
      {
        cluster,
        namespace: 'default',
        runId: 'run-bench-0000',
        owner: 'bench',
        harnessVersion: 'bench',
        simulated: true,
        template,
        transport: 'portforward',
        clock,
        signal: new AbortController().signal,
        readyTimeoutMs: 60_000,
        onPhase: () => {},
      },
      scenario,
    ),
  ),
);
const matrixSeconds = (performance.now() - started) / 1000;

const errors = { log: [] as number[], watch: [] as number[] };
const latency = {
  containerEnd: [] as number[],
  podGone: [] as number[],
  hookStart: [] as number[],
  termLine: [] as number[],
  hookEndLine: [] as number[],
};
// When the sim's runtime took in the log line a point cites (the stamp its log API gives with timestamps=true).
const lineTakenIn = (
  o: (typeof observations)[number],
  point: { from: { kind: string; line?: number } } | null,
): number | null => {
  const stamp =
    point?.from.kind === 'log' && point.from.line !== undefined ? o.evidence.logLines[point.from.line]?.apiTime : null;
  return stamp ? Date.parse(stamp) : null;
};
const lifetimes: number[] = [];
for (const o of observations) {
  const truth = sim.truth(o.pod!.uid)!;
  const t = o.timeline;
  const termLineAt = lineTakenIn(o, t.termReceived);
  if (t.termReceived && termLineAt !== null) errors.log.push(Math.abs(Date.parse(t.termReceived.at.time) - termLineAt));
  if (t.termReceived && truth.termSentAt) latency.termLine.push(Date.parse(t.termReceived.at.time) - truth.termSentAt);
  if (t.hookEnd?.source === 'container-log') {
    const hookEndLineAt = lineTakenIn(o, t.hookEnd);
    if (hookEndLineAt !== null) errors.log.push(Math.abs(Date.parse(t.hookEnd.at.time) - hookEndLineAt));
    if (truth.hookEndAt && !truth.hookTimedOut)
      latency.hookEndLine.push(truth.hookEndAt - Date.parse(t.hookEnd.at.time));
  }
  if (t.containerTerminated && truth.exitPublishedAt)
    errors.watch.push(Math.abs(Date.parse(t.containerTerminated.at.wall) - truth.exitPublishedAt));
  if (t.podDeleted && truth.goneAt) errors.watch.push(Math.abs(Date.parse(t.podDeleted.at.wall) - truth.goneAt));
  if (truth.exitPublishedAt && truth.exitedAt) latency.containerEnd.push(truth.exitPublishedAt - truth.exitedAt);
  if (truth.goneAt && truth.exitPublishedAt) latency.podGone.push(truth.goneAt - truth.exitPublishedAt);
  if (t.hookStart?.source === 'container-log' && truth.hookStartAt)
    latency.hookStart.push(Date.parse(t.hookStart.at.time) - truth.hookStartAt);
  lifetimes.push(truth.createdAt && truth.goneAt ? (truth.goneAt - truth.createdAt) / 1000 : Number.NaN);
}
await sim.stop();

// The real node's side of the same sources, from the last fidelity run (no ground truth there:
// TERM → container ended of the server that exits at once on TERM, ended → DELETED, hook launch → first line).
let node: SideFile['runs'] = [];
// The same scenarios as the matrix above: the record's others (retries, sidecars) keep their pods longer.
const matrixNames = new Set(scenarios.map((s) => s.name));
if (NODE_RECORD)
  node = SideFileSchema.parse(JSON.parse(readFileSync(NODE_RECORD, 'utf8'))).runs.filter((r) =>
    matrixNames.has(r.scenario),
  );
console.log(`node_record: ${NODE_RECORD ?? 'none (no reports/fidelity/v1.N/node.json)'}`);
const nodeFigure = (values: (number | null | undefined)[]) => {
  const known = values.filter((v): v is number => typeof v === 'number');
  return known.length ? `${percentile(known, 0.95).toFixed(1)} (n=${known.length})` : 'not recorded';
};
const ms = (a: number | null, b: number | null) => (a === null || b === null ? null : (a - b) * 1000);

const longest = Math.max(...lifetimes);
const modelLongest = Math.max(...scenarios.map((s) => s.deleteDelayMs / 1000 + predict(s).exitAt));
const all = [...errors.log, ...errors.watch];
const fixed = (v: number, digits = 1) => v.toFixed(digits);
console.log(`matrix_seconds: ${fixed(matrixSeconds, 2)}`);
console.log(`longest_scenario_seconds: ${fixed(longest, 2)}`);
console.log(`matrix_ratio: ${fixed(matrixSeconds / longest, 3)}`);
console.log(`longest_scenario_model_seconds: ${fixed(modelLongest, 2)}`);
console.log(`harness_error_samples: ${all.length}`);
console.log(`harness_error_p95_ms: ${fixed(percentile(all, 0.95))}`);
console.log(`harness_error_max_ms: ${fixed(Math.max(...all))}`);
console.log(`harness_error_log_p95_ms: ${fixed(percentile(errors.log, 0.95))}`);
console.log(`harness_error_watch_p95_ms: ${fixed(percentile(errors.watch, 0.95))}`);
console.log(`source_latency_ms_container_end_p95: ${fixed(percentile(latency.containerEnd, 0.95))}`);
console.log(
  `source_latency_ms_container_end_node_p95: ${nodeFigure(node.filter((r) => r.scenario === 'immediate-exit').map((r) => ms(r.offsets.ended, r.offsets.term)))}`,
);
console.log(`source_latency_ms_pod_gone_p95: ${fixed(percentile(latency.podGone, 0.95))}`);
console.log(
  `source_latency_ms_pod_gone_node_p95: ${nodeFigure(node.map((r) => ms(r.offsets.deleted, r.offsets.ended)))}`,
);
console.log(`source_latency_ms_hook_start_p95: ${fixed(percentile(latency.hookStart, 0.95))}`);
console.log(`source_latency_ms_hook_start_node_p95: ${nodeFigure(node.map((r) => r.hookLaunchLagMs))}`);
console.log(`source_latency_ms_term_line_p95: ${fixed(percentile(latency.termLine, 0.95))}`);
console.log(`source_latency_ms_hook_end_line_p95: ${fixed(percentile(latency.hookEndLine, 0.95))}`);
console.log(`exec_hook_start_lag_p95_ms: ${fixed(percentile(latency.hookStart, 0.95))}`);
