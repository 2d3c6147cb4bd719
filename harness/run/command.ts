// `termlab run`: every scenario on its own pod, in parallel, then observations, grades and reports.
import { existsSync } from 'node:fs';
import { rename, rm, symlink } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { CommandIO, CommandModule, Values } from '../../lib/command.ts';
import {
  EXIT,
  exitCodeFor,
  gravestExit,
  interruptedExit,
  interruptedWords,
  isTermlabError,
  TermlabError,
  unwritable,
} from '../../lib/errors.ts';
import { exitCodeOf, gradeFile } from '../grade/files.ts';
import { GradeTally } from '../grade/tally.ts';
import { markSuperseded, retryReason } from '../grade/attempts.ts';
import { INTERRUPTED_MARKER, PREDICTIONS_NAME } from '../pack/manifest.ts';
import { gradePairs } from '../grade/pairs.ts';
import { coverageProblem, readSealable, retryFieldProblem, seal } from '../grade/predictions.ts';
import type { GradeResult, PairResult } from '../grade/types.ts';
import { connect, DEFAULT_API_PATIENCE_MS, type Cluster } from '../kube/index.ts';
import { z } from 'zod';
import { formatIssue, makeDirectory, writeFileAtomic } from '../../lib/files.ts';
import { proxySyncDelayMs as proxySyncDelay } from '../../lib/proxy-delay.ts';
import { escapeTerminal } from '../../lib/terminal.ts';
import { writeReports } from '../report/write.ts';
import { checkPodCap } from '../safety/cap.ts';
import { formatReap, reap } from '../safety/reap.ts';
import { newRunRecord, type RunRecord, saveRun } from '../safety/runs.ts';
import { sweepRun } from '../safety/sweep.ts';
import { defaultOwnerId, isLabelValue, newRunId } from '../safety/labels.ts';
import { environmentOf } from '../safety/environment.ts';
import { type Ownership, ownershipOf, whoAmI } from '../safety/identity.ts';
import { DEFAULT_QUOTA_WAIT_MS } from '../safety/quota.ts';
import { loadScenarioSet, loadTemplate, onlyNames } from '../scenario/load.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import { RunClock } from './clock.ts';
import type { runFlags } from './flags.ts';
import { createProgress } from './progress.ts';
import type { ScenarioContext } from './scenario.ts';
import { EDGE_SCENARIOS, POD_SCENARIOS, podsOfScenario, ROLLOUT_SCENARIOS, type ScenarioKind } from './kinds.ts';
import { exitReason, summaryTable } from './summary.ts';
import { graceCaption, predictionLines, predictionsCount, tryName } from '../report/format.ts';

export interface SimHandle {
  kubeconfig: string;
  stop(): Promise<void>;
}
/** What `--sim` may set on the simulated cluster it starts. */
export interface SimStartOptions {
  proxySyncDelayMs?: number;
  kubeVersion?: string;
  /** --feature-gates, as the simulated cluster parses it. */
  featureGates?: string;
  /** Install the edge (manifests/edge/traefik.yaml) and wait for it Ready: `termlab verify --sim --via`, and scenario files whose load goes through it. */
  edge?: boolean;
}
/** `--sim`'s cluster: started through the CLI's one door to cluster/sim. */
export type StartSim = (options: SimStartOptions) => Promise<SimHandle>;

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new TermlabError('USAGE', `${flag}: expected a whole number of at least 1, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Runs tasks with at most `limit` at once, in order of the list. */
async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!);
      }
    }),
  );
  return results;
}

function wholeNumber(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value))
    throw new TermlabError('USAGE', `${flag}: expected a whole number (0 for none), got ${JSON.stringify(value)}`);
  return Number(value);
}

function wholeSeconds(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value))
    throw new TermlabError('USAGE', `${flag}: expected a whole number of seconds, got ${JSON.stringify(value)}`);
  return Number(value);
}

const isApiFailure = (error: unknown): error is TermlabError =>
  isTermlabError(error) && (error.code === 'API_UNREACHABLE' || error.code === 'API_REJECTED');

async function pointLatest(reportsRoot: string, runDir: string): Promise<void> {
  const temporary = join(reportsRoot, `.latest-${process.pid}`);
  try {
    await rm(temporary, { force: true });
    // Relative, so the reports folder can be moved, copied or zipped with its link intact.
    await symlink(relative(reportsRoot, resolve(runDir)), temporary);
    await rename(temporary, join(reportsRoot, 'latest'));
  } catch (error) {
    throw unwritable('OUTPUT_UNWRITABLE', 'the link to the newest run', join(reportsRoot, 'latest'), error);
  }
}

async function makeRunDirectory(path: string, what: string): Promise<void> {
  try {
    await makeDirectory(path);
  } catch (error) {
    throw unwritable('OUTPUT_UNWRITABLE', what, path, error);
  }
}

export function createRunCommand(startSim: StartSim): CommandModule<typeof runFlags> {
  // Its name, summary, usage, help and parser are the Command object's (harness/cli/commands/run.ts): one of each.
  return {
    async run(values, _positionals, io) {
      const plan = await planRun(values);
      const sim = plan.values.sim
        ? await startSim({
            proxySyncDelayMs: plan.proxySyncDelayMs,
            kubeVersion: plan.values['kube-version'],
            featureGates: plan.values['feature-gates'],
            // Only edge scenarios start the edge: any other run's cluster starts as before.
            ...(plan.set.kind === 'edge' ? { edge: true } : {}),
          })
        : null;
      try {
        // One kind per file: the kind's own object runs, writes and counts its scenarios.
        if (plan.set.kind === 'edge') return await executeRun(plan, EDGE_SCENARIOS, plan.set.scenarios, sim, io);
        return plan.set.kind === 'rollout'
          ? await executeRun(plan, ROLLOUT_SCENARIOS, plan.set.scenarios, sim, io)
          : await executeRun(plan, POD_SCENARIOS, plan.set.scenarios, sim, io);
      } finally {
        await sim?.stop();
      }
    },
  };
}

const isTransport = (t: string): t is 'portforward' | 'direct' => t === 'portforward' || t === 'direct';

/**
 * A run without --predictions beside a ./predictions.yaml: the hint to seal it, only when that file is readable and
 * predicts every scenario of this run (a file made for another scenario set, or one with blanks, would be refused).
 */
async function unsealedHere(scenarios: { name: string }[], runScenarios: string | undefined): Promise<string | null> {
  if (!existsSync(PREDICTIONS_NAME)) return null;
  try {
    const { file } = await readSealable(PREDICTIONS_NAME);
    if (
      coverageProblem(
        file,
        PREDICTIONS_NAME,
        scenarios.map((s) => s.name),
        runScenarios,
      )
    )
      return null;
  } catch {
    return null;
  }
  return ` (./${PREDICTIONS_NAME} is here and predicts these scenarios: run with --predictions ${PREDICTIONS_NAME} to seal it; a hand-in without sealed predictions is flagged for review)`;
}

/** plan: every flag checked and the scenarios read before anything touches a cluster. */
async function planRun(values: Values<typeof runFlags>) {
  if (values.sim && (values.context || values.kubeconfig))
    throw new TermlabError('USAGE', '--sim starts its own cluster: leave out --context and --kubeconfig');
  const transport = values.transport ?? 'portforward';
  if (!isTransport(transport))
    throw new TermlabError('USAGE', `--transport: expected portforward or direct, got ${JSON.stringify(transport)}`);
  const set = await loadScenarioSet(values.scenarios, onlyNames(values.only));
  const template = await loadTemplate();
  // Sealed now, before any pod exists: the run records what was predicted before it was seen.
  const sealable = values.predictions ? await readSealable(values.predictions) : undefined;
  const predictions = sealable?.file;
  if (predictions) {
    // A file that predicts another set (or part of this one) is refused before the seal: no run goes unpredicted.
    const uncovered = coverageProblem(
      predictions,
      values.predictions!,
      set.scenarios.map((s) => s.name),
      values.scenarios,
    );
    if (uncovered) throw new TermlabError('PREDICTIONS_INVALID', uncovered, { source: values.predictions });
    // A retry field for a scenario that cannot retry is a wrong field like any other: refused before the seal.
    const stray = retryFieldProblem(predictions, set.scenarios);
    if (stray)
      throw new TermlabError('PREDICTIONS_INVALID', `${values.predictions}: ${stray}`, { source: values.predictions });
  }
  const sealed = sealable ? seal(sealable.text) : undefined;
  const sealHint = sealable ? null : await unsealedHere(set.scenarios, values.scenarios);
  // No answer before a prediction: with none sealed and no --reveal, what the run saw and what the model says
  // stay off the terminal and out of the reports, as `termlab scenarios` keeps them until --reveal. A rollout has
  // no answer to hide (its answer comes from the old pods' live lifecycle, as `termlab scenarios` says).
  // An edge scenario's answer follows from its file (the model of the edge's lag): hidden like a pod's.
  const hidden =
    set.kind === 'rollout' || sealed || values.reveal
      ? null
      : set.kind === 'edge'
        ? edgeHiddenHint(values)
        : hiddenHint(values);
  // Rollouts run one at a time by default: their timing under load is the lesson.
  const maxPods = positiveInt(values['max-pods'], '--max-pods', 8);
  // Retry scenarios hold three pods each: by default as many run at once as the pod cap has room for.
  const widest = set.kind === 'pod' ? Math.max(...set.scenarios.map(podsOfScenario)) : 1;
  const parallel = positiveInt(
    values.parallel,
    '--parallel',
    Math.max(
      1,
      Math.min((set.kind === 'pod' ? POD_SCENARIOS : ROLLOUT_SCENARIOS).defaultParallel, Math.floor(maxPods / widest)),
    ),
  );
  const readyTimeoutMs = positiveInt(values['ready-timeout'], '--ready-timeout', 120) * 1000;
  const apiPatienceMs = wholeSeconds(values['api-patience'], '--api-patience', DEFAULT_API_PATIENCE_MS / 1000) * 1000;
  const env = await environmentOf(values);
  // A scenario whose request the harness lost runs again on a fresh pod, this many times at most.
  const retries = wholeNumber(values.retries, '--retries', 1);
  // A full class quota: wait this long for room, with backoff, then end with exit 3 naming it.
  const quotaWaitMs = wholeSeconds(values['quota-wait'], '--quota-wait', DEFAULT_QUOTA_WAIT_MS / 1000) * 1000;

  if (values['proxy-sync-delay-ms'] !== undefined && !values.sim)
    throw new TermlabError(
      'USAGE',
      "--proxy-sync-delay-ms: only with --sim (a real cluster's proxies take the time they take)",
    );
  const proxySyncDelayMs = proxySyncDelay(values['proxy-sync-delay-ms']);
  // The minor a simulated cluster emulates; a real cluster is whatever version it is.
  if (values['kube-version'] !== undefined && !values.sim)
    throw new TermlabError('USAGE', '--kube-version: only with --sim (a real cluster runs the version it runs)');
  if (values['feature-gates'] !== undefined && !values.sim)
    throw new TermlabError(
      'USAGE',
      "--feature-gates: only with --sim (a real cluster's gates are its API server's and kubelets' flags)",
    );
  // A folder that cannot be made is said now, before a simulated cluster starts or a real one is touched.
  const outDir = values['output-dir'] === undefined ? undefined : resolve(values['output-dir']);
  if (outDir) await makeRunDirectory(outDir, '--output-dir');
  return {
    values,
    transport,
    set,
    sealHint,
    template,
    sealable,
    predictions,
    sealed,
    hidden,
    parallel,
    maxPods,
    readyTimeoutMs,
    apiPatienceMs,
    env,
    retries,
    quotaWaitMs,
    proxySyncDelayMs,
    outDir,
  };
}
type RunPlan = Awaited<ReturnType<typeof planRun>>;

/** How to see the answers a run without predictions keeps hidden: predict (for the same scenarios), or --reveal. */
function hiddenHint(values: Values<typeof runFlags>): string {
  const predict = [
    'termlab predict',
    ...(values.scenarios === undefined ? [] : [`--scenarios ${values.scenarios}`]),
    ...(values.only === undefined ? [] : [`--only ${values.only}`]),
  ].join(' ');
  return `answers hidden: no predictions were sealed, so the outcomes, exit codes, verdicts and the kubelet model's answers are not shown (the observation files hold the evidence in full). Predict each outcome first: \`${predict}\`, then run with --predictions; or run again with --reveal to see them now.`;
}

/** An edge run's hint: predict from `termlab scenarios` (the setup), then --reveal; predict's file does not cover edges yet. */
function edgeHiddenHint(values: Values<typeof runFlags>): string {
  const scenarios = values.scenarios === undefined ? '' : ` --scenarios ${values.scenarios}`;
  return `answers hidden: the outcomes, verdicts and the edge model's answers are not shown (the observation files hold the evidence in full). Predict from each setup first (\`termlab scenarios${scenarios}\`), then run again with --reveal, or grade these files with \`termlab grade\`.`;
}

/** execute and finish: one kind's scenarios on the cluster, each try written and graded, then the reports and the exit code. */
async function executeRun<S extends { name: string }, O>(
  plan: RunPlan,
  kind: ScenarioKind<S, O>,
  scenarios: S[],
  sim: SimHandle | null,
  io: CommandIO,
): Promise<number> {
  const opened = await openRun(plan, kind, scenarios, sim, io);
  const tried = await runTries(plan, kind, scenarios, opened, io);
  const apiLost = await closeRun(kind, scenarios, opened, tried, io);
  const pairs = await writeRunReports(plan, kind, scenarios, opened, tried, io);
  printOutcome(tried.results, pairs, opened.runDir, plan.hidden, io);
  if (apiLost) throw apiLostError(plan, opened, tried.podsLeft);
  return exitCodeOfRun(tried, pairs, plan.hidden !== null, io);
}

/** A run opened on its cluster: who owns it, its record (which `termlab reap` reads) and its folder. */
interface OpenedRun {
  cluster: Cluster;
  namespace: string;
  ownership: Ownership;
  runId: string;
  record: RunRecord;
  runDir: string;
  simulated: boolean;
}

/** plan on the cluster: connect, name the owner, reap what earlier runs left, record the run, make its folder and say so. */
async function openRun<S extends { name: string }, O>(
  plan: RunPlan,
  kind: ScenarioKind<S, O>,
  scenarios: S[],
  sim: SimHandle | null,
  io: CommandIO,
): Promise<OpenedRun> {
  const {
    values,
    transport,
    sealable,
    predictions,
    sealed,
    parallel,
    maxPods,
    readyTimeoutMs,
    apiPatienceMs,
    retries,
  } = plan;
  const cluster: Cluster = await connect({
    ...(sim ? { kubeconfigText: sim.kubeconfig } : { kubeconfig: values.kubeconfig, context: values.context }),
    apiPatienceMs,
    offersSim: true,
  });
  const namespace = values.namespace ?? cluster.contextNamespace ?? 'default';
  if (values.owner !== undefined && !isLabelValue(values.owner))
    throw new TermlabError(
      'USAGE',
      `--owner: ${JSON.stringify(values.owner)} is not a valid label value (63 characters of A-Z a-z 0-9 - _ ., starting and ending alphanumeric)`,
    );
  // The owner label is who the cluster says the caller is; termlab's own name only where it does not say.
  const ownership = ownershipOf(await whoAmI(cluster, io.signal), values.owner, () =>
    defaultOwnerId(cluster.context, cluster.server),
  );
  const owner = ownership.owner;
  const runId = newRunId();
  const leftovers = await reap(cluster, namespace, owner, { exceptRun: runId });
  if (leftovers.entries.some((e) => e.result !== 'skipped'))
    io.out(`cleaning up leftovers of earlier runs:\n${formatReap(leftovers)}\n`);
  await checkPodCap(cluster, namespace, owner, kind.podsAtOnce(scenarios, parallel), maxPods);
  // Each wave of scenarios may also wait out one API outage, and each try that runs again is one more wave:
  // a live run past its recorded deadline is one another run of the owner may reap.
  const tries = kind.runsTriesAgain ? retries + 1 : 1;
  const runDeadlineMs =
    ((Math.max(...scenarios.map(kind.deadlineSeconds)) + readyTimeoutMs / 1000) * 1000 + apiPatienceMs) *
    Math.ceil(scenarios.length / parallel) *
    tries;
  const record = newRunRecord({
    runId,
    owner,
    identity: ownership.identity,
    ownerSource: ownership.source,
    ...(ownership.source === 'SelfSubjectReview' ? {} : { note: ownership.note }),
    context: cluster.context,
    namespace,
    deadline: new Date(Date.now() + runDeadlineMs).toISOString(),
    ...(sealed ? { predictions: { sha256: sealed.sha256, sealedAt: sealed.sealedAt } } : {}),
  });
  await saveRun(record);

  const runDir = plan.outDir ?? resolve('reports', runId);
  await makeRunDirectory(runDir, plan.outDir ? '--output-dir' : 'the run directory');
  // The sealed copy `termlab pack` hands in: the bytes whose hash every observation carries.
  if (sealable) await writeFileAtomic(join(runDir, PREDICTIONS_NAME), sealable.text);
  io.out(
    `termlab ${HARNESS_VERSION}: run ${runId} on context "${cluster.context}" (${cluster.serverVersion}), namespace ${namespace}, owner ${owner} (${escapeTerminal(ownership.note)})\n`,
  );
  io.out(
    `${scenarios.length} scenario(s), ${Math.min(parallel, scenarios.length)} at a time, ${kind.describeTraffic(transport)}\n`,
  );
  io.out(
    `${sealed ? `predictions sealed: ${escapeTerminal(values.predictions!)} (sha256 ${sealed.sha256.slice(0, 12)}…)${predictions?.student ? ` for ${escapeTerminal(predictions.student)}` : ''}` : `no predictions sealed${plan.sealHint ?? ''}${plan.hidden === null ? '' : ": the outcomes and the model's answers stay hidden (predict first, or pass --reveal)"}`}\n\n`,
  );
  return {
    cluster,
    namespace,
    ownership,
    runId,
    record,
    runDir,
    simulated: sim !== null || Boolean(cluster.serverVersion?.includes('termlab-sim')),
  };
}

/** What the tries left: the grades (a superseded try marked), the problems, the early ends and the pods not seen gone. */
interface Tried {
  results: GradeResult[];
  problems: string[];
  /** A scenario ended early by a failure keeps its code to the end: the exit code follows from it. */
  failures: { scenario: string; error: TermlabError }[];
  /** Pods created and not yet seen gone: named in the message if the API never comes back. */
  podsLeft: Set<string>;
}

/** tries: every scenario, `--parallel` at a time, each try written and graded, a lost one run again on a fresh pod. */
async function runTries<S extends { name: string }, O>(
  plan: RunPlan,
  kind: ScenarioKind<S, O>,
  scenarios: S[],
  opened: OpenedRun,
  io: CommandIO,
): Promise<Tried> {
  const { values, transport, template, predictions, sealed, parallel, readyTimeoutMs, apiPatienceMs, env } = plan;
  const { cluster, namespace, runId, ownership, runDir } = opened;
  const progress = createProgress(
    scenarios.map((s) => ({ name: s.name, deadlineSeconds: kind.deadlineSeconds(s) })),
    io.out,
    io.isTTY,
    values.verbose,
    !values.sim,
  );
  // One line while the API is away, and one when it is back.
  const stopOutageReports = cluster.health.onReport((report) =>
    progress.notice(
      report.state === 'unreachable'
        ? `API unreachable for ${Math.round(report.seconds)} s, still waiting (up to ${apiPatienceMs / 1000} s): ${report.detail}`
        : `API reachable again after ${report.seconds.toFixed(1)} s`,
    ),
  );
  const podsLeft = new Set<string>();
  const context: Omit<ScenarioContext, 'onPhase'> = {
    cluster,
    namespace,
    runId,
    owner: ownership.owner,
    identity: ownership.identity ?? undefined,
    harnessVersion: HARNESS_VERSION,
    simulated: opened.simulated,
    template,
    image: values.image,
    env,
    transport,
    clock: new RunClock(),
    signal: io.signal,
    readyTimeoutMs,
    quotaWaitMs: plan.quotaWaitMs,
    predictions: sealed,
    pods: { created: (name) => podsLeft.add(name), gone: (name) => podsLeft.delete(name) },
  };
  const problems: string[] = [];
  const failures: Tried['failures'] = [];
  /** One try: its observation written, read back and graded exactly as `termlab grade` does. */
  const tryOnce = async (scenario: S, attempt: number, ended: TermlabError[]): Promise<GradeResult | null> => {
    const observation = await kind.run(
      {
        ...context,
        attempt,
        onPhase: (phase, detail) => progress.phase(scenario.name, phase, detail),
        onFailure: (error) => {
          ended.push(error);
        },
        onNote: (text) => progress.notice(`${scenario.name}: ${escapeTerminal(text)}`),
      },
      scenario,
    );
    const path = join(runDir, `${scenario.name}${attempt > 1 ? `.attempt-${attempt}` : ''}.observation.json`);
    return writeAndGrade(kind, path, observation, predictions, problems);
  };
  const graded = await pool(scenarios, parallel, async (scenario: S): Promise<GradeResult[]> => {
    const tries: GradeResult[] = [];
    for (let attempt = 1; ; attempt++) {
      const ended: TermlabError[] = [];
      const result = await tryOnce(scenario, attempt, ended);
      if (result) tries.push(result);
      // As only the last try's grade counts, so does only its early end; never run again after Ctrl-C.
      const why = result ? retryReason(result) : null;
      if (!why || !kind.runsTriesAgain || attempt > plan.retries || io.signal.aborted) {
        failures.push(...ended.map((error) => ({ scenario: scenario.name, error })));
        return tries;
      }
      progress.notice(`${scenario.name}: try ${attempt} ${escapeTerminal(why)}; running it again on a fresh pod`);
    }
  });
  const results = markSuperseded(graded.flat());
  progress.stop();
  stopOutageReports();
  for (const problem of problems) io.err(`termlab run: ${problem}\n`);
  return { results, problems, failures, podsLeft };
}

/** One try's observation written, then read back and graded; a file that cannot be either is a problem, not a verdict. */
async function writeAndGrade<S extends { name: string }, O>(
  kind: ScenarioKind<S, O>,
  path: string,
  observation: O,
  predictions: RunPlan['predictions'],
  problems: string[],
): Promise<GradeResult | null> {
  try {
    await kind.write(path, observation);
  } catch (error) {
    // Never lose evidence: keep what was recorded beside it. A file that fails its own
    // schema is a problem, not a verdict.
    await writeFileAtomic(`${path}.rejected`, JSON.stringify(observation, null, 2));
    const first = error instanceof z.ZodError ? formatIssue(error.issues[0]!) : (error as Error).message.split('\n')[0];
    problems.push(
      `${path}: the observation could not be written as it is (${escapeTerminal(first ?? '')}); kept as ${path}.rejected`,
    );
    return null;
  }
  try {
    return await gradeFile(path, { predictions });
  } catch (error) {
    if (!isTermlabError(error)) throw error;
    problems.push(error.message);
    return null;
  }
}

/** finish, on the cluster: the run's pods swept and its record closed, each early end said; the API failure that stopped the sweep, or null. */
async function closeRun<S extends { name: string }, O>(
  kind: ScenarioKind<S, O>,
  scenarios: S[],
  opened: OpenedRun,
  tried: Tried,
  io: CommandIO,
): Promise<TermlabError | null> {
  // Finished only once its pods are really gone; otherwise the record stays for the reaper.
  let apiLost: TermlabError | null = null;
  try {
    if (
      await sweepRun(opened.cluster, opened.namespace, opened.runId, { workloads: kind.sweepsWorkloads(scenarios) })
    ) {
      tried.podsLeft.clear();
      await saveRun({ ...opened.record, status: io.signal.aborted ? 'interrupted' : 'finished' });
    }
  } catch (error) {
    if (!isApiFailure(error)) throw error;
    apiLost = error;
  }
  // When the API stayed away, the one line below says so for the run: a scenario's own API failure is part of it.
  for (const f of tried.failures)
    if (!(apiLost && isApiFailure(f.error)))
      io.err(`termlab run: ${f.scenario}: ${f.error.code}: ${escapeTerminal(f.error.message)}\n`);
  return apiLost;
}

/** finish, on disk: the pairs judged, the reports written, the folder marked interrupted or linked as reports/latest. */
async function writeRunReports<S extends { name: string }, O>(
  plan: RunPlan,
  kind: ScenarioKind<S, O>,
  scenarios: S[],
  opened: OpenedRun,
  { results, problems }: Tried,
  io: CommandIO,
): Promise<PairResult[]> {
  const { runDir, runId } = opened;
  // A pair is judged only when both of its halves were part of this run.
  const pairs = gradePairs(results).filter((p) => scenarios.filter((s) => kind.pairOf(s) === p.pairId).length >= 2);
  await writeReports(
    { results, pairs, problems },
    { md: join(runDir, 'report.md'), html: join(runDir, 'report.html'), junit: join(runDir, 'junit.xml') },
    plan.hidden,
  );
  // An interrupted run is no result to open or hand in: reports/latest stays on the last whole one,
  // and the folder says so (a scenario that finished before the Ctrl-C reads complete by itself).
  if (io.signal.aborted)
    await writeFileAtomic(
      join(runDir, INTERRUPTED_MARKER),
      `run ${runId} was ${interruptedWords(io.signal)} before it finished\n`,
    );
  if (!plan.values['output-dir'] && !io.signal.aborted) await pointLatest(resolve('reports'), runDir);
  return pairs;
}

/**
 * finish, on the terminal: the summary table, what did not match, the predictions, the pairs and where the reports
 * are; with the answers `hidden`, the setups and how to see the rest.
 */
function printOutcome(
  results: GradeResult[],
  pairs: PairResult[],
  runDir: string,
  hidden: string | null,
  io: CommandIO,
): void {
  io.out(`\n${summaryTable(results, hidden !== null)}`);
  if (hidden !== null) io.out(`${hidden}\n`);
  else printAnswers(results, pairs, io);
  io.out(`\nreports: ${runDir}/report.html (also report.md, junit.xml, *.observation.json)\n`);
  if (io.signal.aborted)
    io.out(
      'interrupted: this run is recorded as interrupted; reports/latest was not moved to it and `termlab pack` refuses it\n',
    );
}

/** What the table's answers come with: each result that did not match, the predictions, the pairs. */
function printAnswers(results: GradeResult[], pairs: PairResult[], io: CommandIO): void {
  for (const r of results.filter((x) => x.verdict !== 'matches-model'))
    io.out(`  ${r.scenario}: ${escapeTerminal(r.explanation)}\n`);
  // A stopSignal the cluster dropped is said for a run that matched too: what ran was SIGTERM.
  for (const r of results)
    if (r.kind === 'pod' && r.prediction?.stopSignal && !r.prediction.stopSignal.delivered)
      io.out(`  ${r.scenario}: ${escapeTerminal(r.prediction.stopSignal.note)}\n`);
  // Each chart's caption, the same sentence as under it in report.html: what the grace did for the request.
  for (const r of results.filter((x) => !x.supersededBy)) {
    const caption = graceCaption(r);
    if (caption) io.out(`  ${tryName(r)}: ${escapeTerminal(caption)}\n`);
  }
  for (const r of results) for (const line of predictionLines(r)) io.out(`  ${r.scenario}: ${line}\n`);
  const count = predictionsCount(results.filter((r) => !r.supersededBy));
  if (count) io.out(`  ${count}\n`);
  for (const pair of pairs)
    for (const c of pair.checks)
      io.out(`lab pair ${escapeTerminal(pair.pairId)}: ${c.status} — ${escapeTerminal(c.reason)}\n`);
}

/** The API stayed away past --api-patience: the run stays unfinished, and the error names the pods it may have left. */
function apiLostError(plan: RunPlan, opened: OpenedRun, podsLeft: Set<string>): TermlabError {
  const { cluster, namespace, runId } = opened;
  const left = podsLeft.size ? [...podsLeft].sort().join(', ') : 'none known';
  return new TermlabError(
    'API_UNREACHABLE',
    `the API of context "${cluster.context}" (${cluster.server}) stayed unreachable past --api-patience ${plan.apiPatienceMs / 1000}s; pods left in ${namespace}: ${left}; run ${runId} stays unfinished: \`termlab reap\` removes them once the API is back`,
    { context: cluster.context, podsLeft: [...podsLeft] },
  );
}

/** The exit code: 130 after Ctrl-C (143 after SIGTERM), else the gravest of the grades' and the early ends'; a non-zero one says why. */
function exitCodeOfRun(tried: Tried, pairs: PairResult[], hidden: boolean, io: CommandIO): number {
  const { results, problems, failures } = tried;
  const code = io.signal.aborted
    ? interruptedExit(io.signal)
    : gravestExit([
        exitCodeOf({ pairs, problems, tally: GradeTally.of(results) }),
        ...failures.map((f) => exitCodeFor(f.error.code)),
      ]);
  // A non-zero exit says why, so a table of ✅ never ends in an unexplained 1.
  if (code !== EXIT.ok)
    io.out(
      `${exitReason(code, { results, pairs, problems, failures, hidden, interrupted: io.signal.aborted ? interruptedWords(io.signal) : null })}\n`,
    );
  return code;
}
