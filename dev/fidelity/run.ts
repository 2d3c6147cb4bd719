// npm run fidelity: the same matrix (the default scenarios, manifests/fidelity-edge.yaml, sidecars.yaml and retries.yaml, then
// the edge lab's manifests/edge.yaml through each side's edge) on the simulated cluster and on the real node, three
// repetitions each (the edge scenarios --edge-repetitions), for one Kubernetes minor; writes
// reports/fidelity/v1.N/<side>.json and, once both sides are there, reports/fidelity/v1.N/fidelity.md.
// --check exits 1 when they disagree.
//   npm run fidelity                        both sides (the real node must be up), the minor the node runs
//   npm run fidelity -- --kube v1.36.3      the same, and refuse a node that is not v1.36.3 (the sim emulates 1.36)
//   npm run fidelity -- --side sim|node     one side; the report is rewritten if the other side's file exists
//   npm run fidelity -- --check             compare the recorded sides only
//   npm run fidelity -- --feature-gates ContainerStopSignals=true   the simulated side with the node's gates
//   npm run fidelity -- --edge-repetitions 0   without the edge scenarios (a node without the edge)
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startSimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { TermlabError } from '../../lib/errors.ts';
import { writeFileAtomic } from '../../lib/files.ts';
import { devArgs, runDevTool, wholeNumber } from '../entry.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { runScenario, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadScenarios, loadTemplate, DEFAULT_SCENARIOS } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { newRunId } from '../../harness/safety/labels.ts';
import { runEdge } from '../../harness/run/edge.ts';
import { writeAnyObservation } from '../../harness/observation/write.ts';
import type { EdgeObservation } from '../../harness/observation/edge.ts';
import { loadScenarioSet } from '../../harness/scenario/load.ts';
import type { EdgeScenario } from '../../harness/scenario/edge.ts';
import { DEFAULT_KUBE_VERSION, paths } from '../node/layout.ts';
import { upVersion } from '../node/versions.ts';
import { compareMatrixWide, compareSides, stats } from './compare.ts';
import { compareEdgeSides } from './edge-compare.ts';
import { type EdgeRunSummary, summarizeEdge } from './edge-summary.ts';
import { containerdKills } from './containerd-log.ts';
import { kubeletHookLaunches } from './kubelet-log.ts';
import { renderFidelity } from './report.ts';
import { SideFileSchema, summarize, type Kills, type RunSummary, type SideFile } from './summary.ts';

const EDGE_CASE_SCENARIOS = resolve('manifests/fidelity-edge.yaml');
// The edge lab (issue 42): a rollout whose load goes through the cluster's edge (Traefik), each side's own.
const EDGE_LAB_SCENARIOS = resolve('manifests/edge.yaml');
// Pods with a proxy sidecar (issue 26): the kubelet's termination order, regular and native.
const SIDECAR_SCENARIOS = resolve('manifests/sidecars.yaml');
// A client that retries on another pod, and a ledger that counts the effects (issue 27).
const RETRY_SCENARIOS = resolve('manifests/retries.yaml');
// The real node's OOM kill, which the model predicts (test/grade/deadline.test.ts); reports/examples/oom-137 is the built one it does not.
const OOM_EXAMPLE = resolve('test/grade/fixtures/deadline/oom-on-term.observation.json');
const REPETITIONS = 3;
/** Each edge scenario's runs a side: one at a time, each ~20 s on the sim and ~1 min on the node (its rollout under load). */
const EDGE_REPETITIONS = 3;
const PARALLEL = 5;
const READY_TIMEOUT_MS = 120_000;
const tool = {
  name: 'fidelity',
  usage:
    'npm run fidelity -- [--side sim|node|both] [--only a,b] [--check] [--repetitions N] [--edge-repetitions N] [--parallel N] [--kubeconfig F] [--context C] [--kube vX.Y.Z] [--feature-gates Name=bool,...]',
  // Each run stops as the harness stops one (its pod deleted, recorded), then the simulated cluster is stopped.
  interrupt: 'abort',
} as const;

function options() {
  const { values } = devArgs(tool, {
    side: { type: 'string', default: 'both' },
    only: { type: 'string' },
    check: { type: 'boolean' },
    repetitions: { type: 'string', default: String(REPETITIONS) },
    'edge-repetitions': { type: 'string', default: String(EDGE_REPETITIONS) },
    parallel: { type: 'string', default: String(PARALLEL) },
    kubeconfig: { type: 'string', default: '.termlab/node/kubeconfig' },
    context: { type: 'string', default: 'termlab-node' },
    kube: { type: 'string' },
    // The simulated side's gates, to match a node started with the same (e.g. ContainerStopSignals=true).
    'feature-gates': { type: 'string' },
  });
  // The release both sides are for: --kube, else the one the node runs, else the node's default.
  const kube = (values.kube ?? upVersion() ?? DEFAULT_KUBE_VERSION).replace(/^(?=\d)/, 'v');
  // A pre-release (v1.38.0-beta.0) is its minor's too.
  const minorMatch = /^v(1\.\d+)(?:\.\d+(?:-[0-9A-Za-z.]+)?)?$/.exec(kube);
  if (!minorMatch)
    throw new TermlabError('USAGE', `--kube: expected a release such as v1.37.2, got ${JSON.stringify(values.kube)}`);
  const side = values.side;
  if (side !== 'sim' && side !== 'node' && side !== 'both')
    throw new TermlabError('USAGE', `--side: expected sim, node or both, got ${side}`);
  const minor = minorMatch[1]!;
  return {
    ...values,
    side,
    kube,
    minor,
    out: resolve('reports/fidelity', `v${minor}`),
    repetitions: wholeNumber('--repetitions', values.repetitions, 1),
    edgeRepetitions: wholeNumber('--edge-repetitions', values['edge-repetitions'], 0),
    parallel: wholeNumber('--parallel', values.parallel, 1),
  };
}
type Options = ReturnType<typeof options>;

async function loadMatrix(onlyFlag: string | undefined): Promise<{ pods: Scenario[]; edge: EdgeScenario[] }> {
  const only = onlyFlag
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const all = [
    ...(await loadScenarios(DEFAULT_SCENARIOS)),
    ...(await loadScenarios(EDGE_CASE_SCENARIOS)),
    ...(await loadScenarios(SIDECAR_SCENARIOS)),
    ...(await loadScenarios(RETRY_SCENARIOS)),
  ];
  const set = await loadScenarioSet(EDGE_LAB_SCENARIOS);
  if (set.kind !== 'edge')
    throw new TermlabError('SCENARIO_INVALID', `${EDGE_LAB_SCENARIOS}: expected edge scenarios (kind: edge)`);
  const picked = <S extends { name: string }>(list: S[]) =>
    only?.length ? list.filter((s) => only.includes(s.name)) : list;
  return { pods: picked(all), edge: picked(set.scenarios) };
}

/** One side's own records of what its kubelet and runtime did, read once the side's runs are over. */
type SideRecords = { hookLaunch: (o: Observation) => number | null; kills: (o: Observation) => Kills };

/** The app's and the sidecar's SIGKILL, by container name, from one side's own record of them. */
function killsOf(o: Observation, killedAt: (uid: string, container: string) => number | null | undefined): Kills {
  const named = (role: 'app' | 'sidecar') => o.containers?.find((c) => c.role === role)?.name;
  const pick = (name: string | undefined) => (o.pod && name ? (killedAt(o.pod.uid, name) ?? null) : null);
  return { app: pick(named('app')), sidecar: pick(named('sidecar')) };
}

/** Runs every scenario `repetitions` times, at most `parallel` at once, then summarizes each run against the side's records. */
async function runSide(
  opts: Pick<Options, 'repetitions' | 'parallel'>,
  signal: AbortSignal,
  cluster: Cluster,
  simulated: boolean,
  scenarios: Scenario[],
  records: () => SideRecords,
): Promise<{ runs: RunSummary[]; observations: Observation[] }> {
  const template = await loadTemplate();
  const clock = new RunClock();
  const namespace = cluster.kc.getContextObject(cluster.context)?.namespace ?? 'default';
  const jobs = Array.from({ length: opts.repetitions }, (_, rep) => ({ rep: rep + 1, runId: newRunId() })).flatMap(
    (r) => scenarios.map((scenario) => ({ ...r, scenario })),
  );
  const done: { o: Observation; rep: number }[] = [];
  const worker = async () => {
    // After Ctrl-C no new run starts; those under way stop as the harness stops them.
    for (let job = jobs.shift(); job && !signal.aborted; job = jobs.shift()) {
      const o = await runScenario(
        fidelityContext({ cluster, namespace, runId: job.runId, simulated, template, clock, signal }),
        job.scenario,
      );
      done.push({ o, rep: job.rep });
      console.log(
        `  ${simulated ? 'sim ' : 'node'} #${job.rep} ${job.scenario.name}: ${o.request.outcome}, exit ${o.finalState?.exitCode ?? null}, ${o.finalState?.reason ?? null}${o.run.complete ? '' : ` (incomplete: ${o.run.incompleteReason ?? null})`}`,
      );
    }
  };
  await Promise.all(Array.from({ length: opts.parallel }, worker));
  // An interrupted side is not recorded: its runs are not the whole matrix.
  signal.throwIfAborted();
  // Every run's pod is gone by now, so its hook launch and its kill are in the logs: each log read once.
  const side = records();
  const runs = done.map(({ o, rep }) => summarize(o, rep, side.hookLaunch(o), side.kills(o)));
  runs.sort((a, b) => a.scenario.localeCompare(b.scenario) || a.repetition - b.repetition);
  return { runs, observations: done.map((d) => d.o) };
}

/** How fidelity runs a scenario on either side: the default transport, its own owner, no phase display. */
function fidelityContext(
  c: Pick<ScenarioContext, 'cluster' | 'namespace' | 'runId' | 'simulated' | 'template' | 'clock' | 'signal'>,
): ScenarioContext {
  return {
    ...c,
    owner: 'fidelity',
    harnessVersion: 'fidelity',
    transport: 'portforward',
    readyTimeoutMs: READY_TIMEOUT_MS,
    onPhase: () => {},
  };
}

/**
 * Runs every edge scenario `repetitions` times, ONE AT A TIME: the runs share the side's edge, whose 2 s throttle
 * another run's route changes would hold (the lag is the lesson's number). Each run is graded by the edge model as it
 * is summarized.
 */
async function runEdgeSide(
  repetitions: number,
  signal: AbortSignal,
  cluster: Cluster,
  simulated: boolean,
  scenarios: EdgeScenario[],
): Promise<{ runs: EdgeRunSummary[]; observations: EdgeObservation[] }> {
  const template = await loadTemplate();
  const clock = new RunClock();
  const namespace = cluster.kc.getContextObject(cluster.context)?.namespace ?? 'default';
  const runs: EdgeRunSummary[] = [];
  const observations: EdgeObservation[] = [];
  for (let rep = 1; rep <= repetitions && !signal.aborted; rep++) {
    const runId = newRunId();
    for (const scenario of scenarios) {
      if (signal.aborted) break;
      const o = await runEdge(
        fidelityContext({ cluster, namespace, runId, simulated, template, clock, signal }),
        scenario,
      );
      const summary = summarizeEdge(o, rep);
      runs.push(summary);
      observations.push(o);
      console.log(
        `  ${simulated ? 'sim ' : 'node'} #${rep} ${scenario.name}: ${summary.verdict}, ${summary.failed} of ${summary.requests} failed${o.run.complete ? '' : ` (incomplete: ${o.run.incompleteReason ?? null})`}`,
      );
    }
  }
  signal.throwIfAborted();
  runs.sort((a, b) => a.scenario.localeCompare(b.scenario) || a.repetition - b.repetition);
  return { runs, observations };
}

/** With --only, the side's other recorded runs are kept: only the scenarios run again are replaced. */
function keepOthers(out: string, file: SideFile, only: boolean): SideFile {
  const path = join(out, `${file.side}.json`);
  if (!only || !existsSync(path)) return file;
  const before = SideFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  const ran = new Set([...file.runs, ...(file.edgeRuns ?? [])].map((r) => r.scenario));
  return {
    ...file,
    // Which runs are of when: the side's other runs keep their recording's time.
    recordedAt: `${before.recordedAt}, ${ran.size} scenario(s) again ${file.recordedAt}`,
    runs: [...before.runs.filter((r) => !ran.has(r.scenario)), ...file.runs],
    edgeRuns: [...(before.edgeRuns ?? []).filter((r) => !ran.has(r.scenario)), ...(file.edgeRuns ?? [])],
  };
}

async function writeSide(
  out: string,
  recorded: SideFile,
  observations: Observation[],
  edgeObservations: EdgeObservation[],
  only: boolean,
): Promise<void> {
  mkdirSync(out, { recursive: true });
  const file = keepOthers(out, recorded, only);
  await writeFileAtomic(join(out, `${file.side}.json`), JSON.stringify(file, null, 2) + '\n');
  const dir = resolve('.termlab/fidelity', file.side);
  mkdirSync(dir, { recursive: true });
  for (const o of observations)
    await writeFileAtomic(
      join(dir, `${o.pod?.name ?? o.scenario.name}.observation.json`),
      JSON.stringify(o, null, 2) + '\n',
    );
  // Several runs of one edge scenario share its name: each file by run.
  for (const o of edgeObservations)
    await writeAnyObservation(join(dir, `${o.scenario.name}-${o.run.runId}.observation.json`), o);
}

await runDevTool(tool, async (signal) => {
  const opts = options();
  const matrix = await loadMatrix(opts.only);
  const scenarios = matrix.pods;
  const edgeScenarios = opts.edgeRepetitions ? matrix.edge : [];
  if (!opts.check && (opts.side === 'sim' || opts.side === 'both')) {
    const gates = opts['feature-gates'];
    console.log(
      `simulated cluster (emulating ${opts.minor}${gates ? `, --feature-gates ${gates}` : ''}): ${scenarios.length} scenarios x ${opts.repetitions}, ${edgeScenarios.length} edge scenarios x ${opts.edgeRepetitions}`,
    );
    let pods: { runs: RunSummary[]; observations: Observation[] } = { runs: [], observations: [] };
    let cluster = 'termlab-sim';
    if (scenarios.length) {
      const sim = await startSimCluster({ kubeVersion: opts.minor, featureGates: gates });
      try {
        const connected = await connect({ kubeconfigText: sim.kubeconfig });
        cluster = connected.serverVersion ?? cluster;
        pods = await runSide(opts, signal, connected, true, scenarios, () => ({
          hookLaunch: (o) => (o.pod ? (sim.truth(o.pod.uid)?.hookStartAt ?? null) : null),
          kills: (o) =>
            killsOf(o, (uid, name) => {
              const c = sim.truth(uid)?.containers?.[name];
              return c?.killSentAt ?? c?.oomKilledAt;
            }),
        }));
      } finally {
        await sim.stop();
      }
    }
    let edge: Awaited<ReturnType<typeof runEdgeSide>> = { runs: [], observations: [] };
    if (edgeScenarios.length) {
      // A cluster of its own with its edge started: the pod scenarios' cluster stays as `npm start` has it.
      const sim = await startSimCluster({ kubeVersion: opts.minor, featureGates: gates, edge: true });
      try {
        const connected = await connect({ kubeconfigText: sim.kubeconfig });
        cluster = connected.serverVersion ?? cluster;
        edge = await runEdgeSide(opts.edgeRepetitions, signal, connected, true, edgeScenarios);
      } finally {
        await sim.stop();
      }
    }
    await writeSide(
      opts.out,
      { side: 'sim', cluster, recordedAt: new Date().toISOString(), runs: pods.runs, edgeRuns: edge.runs },
      pods.observations,
      edge.observations,
      Boolean(opts.only),
    );
  }
  if (!opts.check && (opts.side === 'node' || opts.side === 'both')) {
    if (!existsSync(opts.kubeconfig))
      throw new TermlabError(
        'CLUSTER_UNREACHABLE',
        `${opts.kubeconfig}: no kubeconfig; start the real node first (npm run cluster:up)`,
      );
    console.log(
      `real node: ${scenarios.length} scenarios x ${opts.repetitions}, ${edgeScenarios.length} edge scenarios x ${opts.edgeRepetitions}`,
    );
    const cluster = await connect({ kubeconfig: opts.kubeconfig, context: opts.context });
    // Never file one release's node under another's minor.
    const real = cluster.serverVersion ?? '';
    if (!real.startsWith(`v${opts.minor}.`) || (/^v1\.\d+\.\d+$/.test(opts.kube) && real !== opts.kube))
      throw new TermlabError(
        'USAGE',
        `the node runs ${real || 'an unknown version'}, not ${opts.kube}: bring up ${opts.kube} (npm run cluster:up -- --kube ${opts.kube}) or pass --kube ${real}`,
      );
    const kubeletLog = join(paths.logs, 'kubelet.log');
    const containerdLog = join(paths.logs, 'containerd.log');
    const { runs, observations } = await runSide(opts, signal, cluster, false, scenarios, () => {
      const [launches, kills] = [kubeletHookLaunches(kubeletLog), containerdKills(containerdLog)];
      return {
        hookLaunch: (o) => (o.pod ? (launches.get(o.pod.uid) ?? null) : null),
        kills: (o) => killsOf(o, (uid, name) => kills.get(`${uid}/${name}`)),
      };
    });
    // The node's edge (npm run cluster:up installs it): its runs after the pod scenarios', one at a time.
    const edge = edgeScenarios.length
      ? await runEdgeSide(opts.edgeRepetitions, signal, cluster, false, edgeScenarios)
      : { runs: [], observations: [] };
    await writeSide(
      opts.out,
      {
        side: 'node',
        cluster: cluster.serverVersion ?? 'real node',
        recordedAt: new Date().toISOString(),
        runs,
        edgeRuns: edge.runs,
      },
      observations,
      edge.observations,
      Boolean(opts.only),
    );
    const oom = observations.find((o) => o.run.complete && o.finalState?.reason === 'OOMKilled');
    if (oom) await writeFileAtomic(OOM_EXAMPLE, JSON.stringify(oom, null, 2) + '\n');
  }

  const readSide = (name: string): SideFile | null => {
    const path = join(opts.out, `${name}.json`);
    return existsSync(path) ? SideFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))) : null;
  };
  const notRecorded = (name: 'sim' | 'node'): SideFile => ({
    side: name,
    cluster: 'not recorded',
    recordedAt: 'never',
    runs: [],
  });
  const [simRecorded, nodeRecorded] = [readSide('sim'), readSide('node')];
  if (!simRecorded && !nodeRecorded)
    throw new TermlabError(
      'INPUT_UNREADABLE',
      `neither side is recorded yet in ${opts.out} (npm run fidelity records them)`,
    );
  // With one side missing the report still shows the other, and every scenario as not compared.
  const [simFile, nodeFile] = [simRecorded ?? notRecorded('sim'), nodeRecorded ?? notRecorded('node')];
  const comparisons = compareSides(simFile, nodeFile);
  const matrixWide = compareMatrixWide(simFile, nodeFile);
  const edge = compareEdgeSides(simFile.edgeRuns ?? [], nodeFile.edgeRuns ?? []);
  /** p95 and median of one per-run figure, over the runs that have it. */
  const percentiles = (file: SideFile, pick: (r: SideFile['runs'][number]) => number | null | undefined) => {
    const values = file.runs
      .map(pick)
      .filter((v): v is number => typeof v === 'number')
      .sort((a, b) => a - b);
    const s = stats(values);
    const p95 = values[Math.max(0, Math.ceil(values.length * 0.95) - 1)];
    return { text: s ? `p95 ${p95!.toFixed(0)} ms, median ${s.median.toFixed(0)} ms (n=${s.n})` : 'not measured', p95 };
  };
  const lag = {
    sim: percentiles(simFile, (r) => r.hookLaunchLagMs),
    node: percentiles(nodeFile, (r) => r.hookLaunchLagMs),
  };
  const own = {
    sim: percentiles(simFile, (r) => r.hookProcAgeMs),
    node: percentiles(nodeFile, (r) => r.hookProcAgeMs),
  };
  await writeFileAtomic(
    join(opts.out, 'fidelity.md'),
    renderFidelity(
      comparisons,
      matrixWide,
      simFile,
      nodeFile,
      {
        lag: { sim: lag.sim.text, node: lag.node.text },
        own: { sim: own.sim.text, node: own.node.text },
      },
      edge,
    ),
  );
  const disagreeing = [...comparisons, ...edge].filter((c) => c.disagreements.length);
  const compared = comparisons.length + edge.length;
  console.log(`fidelity_scenarios: ${compared}`);
  console.log(`fidelity_agreeing: ${compared - disagreeing.length}`);
  console.log(`fidelity_edge_scenarios: ${edge.length}`);
  console.log(`fidelity_edge_agreeing: ${edge.filter((c) => !c.disagreements.length).length}`);
  console.log(`exec_hook_start_lag_p95_ms_sim: ${lag.sim.p95?.toFixed(1) ?? 'NaN'}`);
  console.log(`exec_hook_start_lag_p95_ms_node: ${lag.node.p95?.toFixed(1) ?? 'NaN'}`);
  console.log(`exec_hook_proc_age_p95_ms_sim: ${own.sim.p95?.toFixed(1) ?? 'NaN'}`);
  console.log(`exec_hook_proc_age_p95_ms_node: ${own.node.p95?.toFixed(1) ?? 'NaN'}`);
  for (const m of matrixWide)
    console.log(
      `fidelity_matrix_median_${m.offset}: sim ${m.sim?.median.toFixed(3) ?? 'NaN'}, node ${m.node?.median.toFixed(3) ?? 'NaN'}${m.disagrees ? ' (disagree)' : ''}`,
    );
  for (const c of disagreeing) console.log(`  ${c.scenario}: ${c.disagreements.join('; ')}`);
  console.log(`report: ${join(opts.out, 'fidelity.md')}`);
  const matrixDisagreeing = matrixWide.filter((m) => m.disagrees);
  if (opts.check && (disagreeing.length || matrixDisagreeing.length))
    throw new TermlabError(
      'CHECKS_FAILED',
      `the sides disagree: ${disagreeing.length} of ${compared} scenarios, ${matrixDisagreeing.length} matrix-wide figures (${join(opts.out, 'fidelity.md')})`,
    );
});
