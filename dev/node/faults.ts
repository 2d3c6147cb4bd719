// npm run test:cluster:faults — the lab pair on the real node while its control plane or the path to
// the pod fails, as students meet it: the default transport (portforward, which rides the API
// server) first, then direct. Faults: kube-apiserver SIGKILLed and started again with the same
// command line after 3 s and 20 s, at three points (before the kubelet has seen the delete, during
// the hook, after TERM); the kubelet paused (SIGSTOP/SIGCONT) during the hook; the harness's own
// connections reset (a laptop's network blip); the port-forward streams alone reset on the node
// (API healthy); and the API down past --api-patience (exit 3, then `termlab reap`).
// Every try of every scenario is graded from its file; prints fault × transport × verdict and
// `fault_checks_failed: N`. Needs `npm run cluster:up` first, as test:cluster.
//   --full          every case on both transports (about 20 min)
//   --case a,b      only these cases (the baseline always runs)
//   --transport T   only portforward or only direct
// Without --full (what CI runs): portforward at every point with the 3 s outage, the 20 s outage
// during the hook, the kubelet paused and both resets; direct with the 3 s outage during the hook,
// the kubelet paused and the past-patience case. Left to --full: the 20 s outage before the kubelet
// and after TERM on portforward (~100 s each, the during-hook one's path), and the rest of direct,
// whose request never rides the API (CI_SKIP, CI_DIRECT; measured figures in .ci/run).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gradePaths } from '../../harness/grade/files.ts';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import type { GradeResult } from '../../harness/grade/types.ts';
import {
  apiReady,
  killApiServer,
  kubectl,
  pauseKubelet,
  resetHarnessConnections,
  resetPortForwardStreams,
} from './faults-inject.ts';
import { CONTEXT, REPO, paths } from './layout.ts';

type Transport = 'portforward' | 'direct';
const SCENARIOS = 'restored-grace,short-grace';
const OWNER = 'faults';

const tool = {
  name: 'test:cluster:faults',
  usage: 'npm run test:cluster:faults -- [--full] [--case a,b] [--transport portforward|direct]',
  // A fault under way is undone (the API server started again, the kubelet continued) and the run stopped
  // as a Ctrl-C stops it before the suite ends: killed on the spot, it could leave the kubelet stopped.
  interrupt: 'abort',
} as const;

function options() {
  const { values } = devArgs(tool, {
    full: { type: 'boolean', default: false },
    case: { type: 'string' },
    transport: { type: 'string' },
  });
  const only = values.transport;
  if (only !== undefined && only !== 'portforward' && only !== 'direct')
    throw new TermlabError('USAGE', `--transport: expected portforward or direct, got ${JSON.stringify(only)}`);
  const cases = values.case === undefined ? null : new Set(values.case.split(','));
  const known = [...CASE_LIST.map((c) => c.name), 'api-down-past-patience'];
  const unknown = [...(cases ?? [])].filter((name) => !known.includes(name));
  if (unknown.length)
    throw new TermlabError('USAGE', `--case: no such case ${unknown.join(', ')} (the cases: ${known.join(', ')})`);
  return {
    transports: (only ? [only] : ['portforward', 'direct']) as Transport[],
    /** --case picks any case on any transport; otherwise --full runs all, CI its share. */
    selected: (name: string, transport: Transport) =>
      cases ? cases.has(name) : values.full || (transport === 'portforward' ? !CI_SKIP.has(name) : CI_DIRECT.has(name)),
  };
}
/** direct's cases in CI: its request never rides the API, so one outage and the paused kubelet say what differs. */
const CI_DIRECT = new Set(['api-down-3s-during-hook', 'kubelet-paused-5s', 'api-down-past-patience']);
/** portforward's slowest cases, whose path is the 20 s during-hook case's: only with --full. */
const CI_SKIP = new Set(['api-down-20s-before-kubelet', 'api-down-20s-after-term']);

/** The kubelet starts the hook about 1 s after the delete on this node and it lasts 3 s: pause it inside. */
const KUBELET_PAUSE_AFTER_TERMINATING_MS = 2_000;
const KUBELET_PAUSE_MS = 5_000;
/**
 * The three points of an outage, after the first scenario's delete was answered. At 0 the kubelet
 * may already have the first pod's deletion (its watch gets it within ~15 ms), but the second
 * pod's delete meets the outage and is taken only when the API is back: its kubelet sees it late.
 * At 2.5 s the hook runs (it starts ~1 s after the delete); at 6 s short-grace has had TERM (~4.7 s).
 */
const POINTS = [
  { name: 'before-kubelet', ms: 0 },
  { name: 'during-hook', ms: 2_500 },
  { name: 'after-term', ms: 6_000 },
];
const OUTAGES = [
  { label: '3s', ms: 3_000 },
  { label: '20s', ms: 20_000 },
];
/** The resets strike inside the hook, when both requests are in flight. */
const RESET_AFTER_TERMINATING_MS = 2_500;
const SHORT_PATIENCE_SECONDS = 10;
const PAST_PATIENCE_OUTAGE_MS = 30_000;
/** The issue's bar: no termlab pod left this long after a run ends. */
const PODS_GONE_WITHIN_MS = 10_000;

const stateDir = mkdtempSync(join(tmpdir(), 'termlab-faults-'));
/** The node's kubeconfig: this checkout's, or another's (TERMLAB_NODE_KUBECONFIG) when that checkout brought the node up. */
const kubeconfig = process.env.TERMLAB_NODE_KUBECONFIG ?? paths.kubeconfig;
const failures: string[] = [];

/**
 * What a fault may leave. api and reset: the harness lost its path at most, so every try matches
 * the model or is inconclusive with its cause, and the last one matches or is inconclusive.
 * kubelet: the kubelet itself was late; "differs" is honest only when the grader names that.
 */
type Kind = 'api' | 'reset' | 'kubelet';
interface FaultCase {
  name: string;
  kind: Kind;
  transports: Transport[];
  inject(termlabPid: number, log: (line: string) => void): Promise<void>;
}

const outageCases = (o: (typeof OUTAGES)[number]) =>
  POINTS.map(
    (p): FaultCase => ({
      name: `api-down-${o.label}-${p.name}`,
      kind: 'api',
      transports: ['portforward', 'direct'],
      inject: (_pid, log) => killApiServer(kubeconfig, o.ms, p.ms, log),
    }),
  );
// The 20 s outages last: after one the node's kubelet takes up to ~40 s more to see new pods, which the next case waits out.
const CASE_LIST: FaultCase[] = [
  ...outageCases(OUTAGES[0]!),
  {
    name: 'kubelet-paused-5s',
    kind: 'kubelet',
    transports: ['portforward', 'direct'],
    inject: (_pid, log) => pauseKubelet(KUBELET_PAUSE_AFTER_TERMINATING_MS, KUBELET_PAUSE_MS, log),
  },
  {
    name: 'harness-connections-reset',
    kind: 'reset',
    transports: ['portforward', 'direct'],
    inject: (pid, log) => resetHarnessConnections(pid, RESET_AFTER_TERMINATING_MS, log),
  },
  // direct has no forward to cut.
  {
    name: 'portforward-streams-reset',
    kind: 'reset',
    transports: ['portforward'],
    inject: (_pid, log) => resetPortForwardStreams(RESET_AFTER_TERMINATING_MS, log),
  },
  ...outageCases(OUTAGES[1]!),
];

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  tries: GradeResult[];
  pair: string | null;
  endedAt: number;
  seconds: number;
  notes: string[];
}

/** Runs `termlab run` into a fresh folder, calling `fault` once the first scenario reaches the terminating phase. */
async function termlabRun(
  signal: AbortSignal,
  name: string,
  transport: Transport,
  extra: string[],
  fault?: FaultCase['inject'],
): Promise<RunResult> {
  const out = join(REPO, 'reports', 'node-faults', transport, name);
  rmSync(out, { recursive: true, force: true });
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      'bin/termlab.js',
      'run',
      '--verbose', // a line for every phase: the fault is injected at terminating
      // The verdicts and the pair's line are what this tool reads: no predictions, so --reveal.
      '--reveal',
      '--kubeconfig',
      kubeconfig,
      '--context',
      CONTEXT,
      '--only',
      SCENARIOS,
      '--owner',
      OWNER,
      '--transport',
      transport,
      '--output-dir',
      out,
      ...extra,
    ],
    { cwd: REPO, env: { ...process.env, TERMLAB_STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Stopped as a Ctrl-C stops it (its pods deleted), also when the signal reached this process alone.
  const stop = () => child.kill('SIGINT');
  signal.addEventListener('abort', stop, { once: true });
  let stdout = '';
  let stderr = '';
  const notes: string[] = [];
  const log = (line: string) => {
    notes.push(`${((performance.now() - started) / 1000).toFixed(1)}s ${line}`);
    console.log(`  ${line}`);
  };
  let injected: Promise<void> | null = null;
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
    process.stderr.write(c);
  });
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
    process.stdout.write(c.toString().replace(/^(?=.)/gm, '  | '));
    if (fault && !injected && /\bterminating\b/.test(stdout)) injected = fault(child.pid!, log);
  });
  const code: number | null = await new Promise((resolve) => child.on('close', resolve));
  signal.removeEventListener('abort', stop);
  const endedAt = performance.now();
  // The fault is undone whatever happened to the run.
  await injected;
  const tries = existsSync(out) ? (await gradePaths([out])).results : [];
  tries.sort((a, b) => a.scenario.localeCompare(b.scenario) || (a.attempt ?? 1) - (b.attempt ?? 1));
  const pair = /^lab pair \S+: (\w+)/m.exec(stdout)?.[1] ?? null;
  return { code, stdout, stderr, tries, pair, endedAt, seconds: (endedAt - started) / 1000, notes };
}

/** Every termlab pod on the node, in any namespace, with its owner. */
function termlabPods(): { ok: boolean; pods: { name: string; owner: string }[] } {
  const left = kubectl(
    kubeconfig,
    'get',
    'pods',
    '-A',
    '-l',
    'app.kubernetes.io/managed-by=termlab',
    '-o',
    'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.metadata.labels.termlab\\.io/owner}{"\\n"}{end}',
  );
  const pods = left.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name = '', owner = ''] = l.split(' ');
      return { name, owner };
    });
  return { ok: left.status === 0, pods };
}

/**
 * Seconds until no termlab pod of this suite is left, or null past the bar. Pods of another owner
 * (another user of the shared node) are not this suite's to clean up: named, not counted.
 */
async function podsGoneWithin(endedAt: number): Promise<number | null> {
  for (;;) {
    const { ok, pods } = termlabPods();
    const others = pods.filter((p) => p.owner !== OWNER);
    if (ok && pods.length === others.length) {
      if (others.length)
        console.log(
          `  (termlab pods of other owners on the node, not this suite's: ${others.map((p) => `${p.name} (${p.owner})`).join(', ')})`,
        );
      return (performance.now() - endedAt) / 1000;
    }
    if (performance.now() - endedAt > PODS_GONE_WITHIN_MS) return null;
    await sleep(250);
  }
}

function check(name: string, ok: boolean, detail: string): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  if (!ok) failures.push(`${name}: ${detail}`);
}

const short = (v: string) =>
  (
    ({
      'matches-model': 'matches',
      'differs-from-model': 'DIFFERS',
      inconclusive: 'inconclusive',
      'evidence-invalid': 'INVALID',
    }) as Record<string, string>
  )[v] ?? v;

/** fault × transport × scenario → each try's verdict, printed at the end. */
const table: {
  fault: string;
  transport: Transport;
  scenario: string;
  tries: string;
  exit: number | null;
  pair: string | null;
  seconds: number;
}[] = [];
const notes: string[] = [];

/** The honest verdicts of one try under a fault of this kind; null when it is one. */
function dishonest(kind: Kind | 'none', r: GradeResult): string | null {
  if (r.verdict === 'matches-model') return null;
  if (r.verdict === 'inconclusive') return r.explanation.trim() ? null : 'inconclusive without a cause';
  // The kubelet's own lateness is a verdict about the kubelet: honest only when the grader names it.
  if (kind === 'kubelet' && r.verdict === 'differs-from-model' && /the kubelet was late/.test(r.explanation))
    return null;
  return `${r.verdict}: ${r.explanation}`;
}

async function runCase(
  signal: AbortSignal,
  c: FaultCase | { name: string; kind: 'none' },
  transport: Transport,
): Promise<void> {
  signal.throwIfAborted();
  console.log(`\n▶ ${c.name} (${transport})`);
  const run = await termlabRun(signal, c.name, transport, [], 'inject' in c ? c.inject : undefined);
  signal.throwIfAborted();
  const label = `${c.name} ${transport}`;
  for (const scenario of [...new Set(run.tries.map((t) => t.scenario))]) {
    const tries = run.tries.filter((t) => t.scenario === scenario);
    table.push({
      fault: c.name,
      transport,
      scenario,
      tries: tries.map((t) => short(t.verdict)).join(' → '),
      exit: run.code,
      pair: run.pair,
      seconds: run.seconds,
    });
    for (const t of tries) {
      const wrong =
        c.kind === 'none'
          ? t.verdict === 'matches-model'
            ? null
            : `${t.verdict}: ${t.explanation}`
          : dishonest(c.kind, t);
      check(
        `${label} ${scenario} try ${t.attempt ?? 1}`,
        wrong === null,
        wrong ?? `${t.verdict}${t.verdict === 'matches-model' ? '' : `: ${t.explanation.slice(0, 200)}`}`,
      );
    }
  }
  for (const n of run.notes) notes.push(`${label}: ${n}`);
  check(
    `${label} both scenarios graded`,
    new Set(run.tries.map((t) => t.scenario)).size === 2,
    `${run.tries.length} tries graded`,
  );
  check(
    `${label} exit`,
    run.code === 0 || run.code === 1,
    `exit ${run.code}${run.code === 70 ? ` (internal error: ${run.stderr.trim().split('\n')[0]})` : ''}`,
  );
  check(`${label} no stack trace`, !/\n\s+at /.test(run.stderr), run.stderr.trim().split('\n')[0] || 'stderr empty');
  // A lost path never fails the pair; only a kubelet that was late may.
  check(
    `${label} lab pair`,
    run.pair !== null && (run.pair !== 'fail' || c.kind === 'kubelet'),
    `lab pair ${run.pair ?? 'not graded'}`,
  );
  const gone = await podsGoneWithin(run.endedAt);
  check(
    `${label} pods gone`,
    gone !== null,
    gone === null
      ? `termlab pods still listed ${PODS_GONE_WITHIN_MS / 1000}s after the run`
      : `within ${gone.toFixed(1)}s of the run's end`,
  );
  console.log(`fault_${label.replace(/[- ]/g, '_')}_seconds: ${run.seconds.toFixed(1)}`);
}

async function pastPatience(signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  console.log(`\n▶ api-down-past-patience (direct, --api-patience ${SHORT_PATIENCE_SECONDS})`);
  const past = await termlabRun(
    signal,
    'api-down-past-patience',
    'direct',
    ['--api-patience', String(SHORT_PATIENCE_SECONDS)],
    (_pid, log) => killApiServer(kubeconfig, PAST_PATIENCE_OUTAGE_MS, 2_500, log),
  );
  const message = past.stderr.trim().split('\n').filter(Boolean);
  check('past-patience exit', past.code === 3, `exit ${past.code}`);
  check(
    'past-patience message',
    message.length === 1 && /pods left in \S+: tl-/.test(message[0]!) && !/\n\s+at /.test(past.stderr),
    message.join(' / ') || 'no message',
  );
  await apiReady(kubeconfig);
  signal.throwIfAborted();
  const reap = spawn(
    process.execPath,
    ['bin/termlab.js', 'reap', '--kubeconfig', kubeconfig, '--context', CONTEXT, '--owner', OWNER],
    { cwd: REPO, env: { ...process.env, TERMLAB_STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  reap.stdout.on('data', (c: Buffer) => process.stdout.write(c.toString().replace(/^(?=.)/gm, '  | ')));
  const reapCode: number | null = await new Promise((resolve) => reap.on('close', resolve));
  check('reap after the outage', reapCode === 0, `exit ${reapCode}`);
  const gone = await podsGoneWithin(performance.now());
  check(
    'reap removed them',
    gone !== null,
    gone === null ? 'termlab pods still listed' : `gone ${gone.toFixed(1)}s after reap`,
  );
  table.push({
    fault: 'api-down-past-patience',
    transport: 'direct',
    scenario: '(run)',
    tries: `exit 3, reaped: ${reapCode === 0 && gone !== null ? 'yes' : 'no'}`,
    exit: past.code,
    pair: null,
    seconds: past.seconds,
  });
}

async function main(signal: AbortSignal): Promise<void> {
  const { transports, selected } = options();
  const suiteStarted = performance.now();
  await apiReady(kubeconfig);
  for (const transport of transports) {
    await runCase(signal, { name: 'baseline', kind: 'none' }, transport);
    for (const c of CASE_LIST)
      if (c.transports.includes(transport) && selected(c.name, transport)) await runCase(signal, c, transport);
  }
  if (transports.includes('direct') && selected('api-down-past-patience', 'direct')) await pastPatience(signal);

  console.log(
    '\nfault                               transport    scenario        exit  pair          seconds  verdict of each try',
  );
  for (const r of table)
    console.log(
      `${r.fault.padEnd(36)}${r.transport.padEnd(13)}${r.scenario.padEnd(16)}${String(r.exit).padEnd(6)}${(r.pair ?? '-').padEnd(14)}${r.seconds.toFixed(1).padStart(7)}  ${r.tries}`,
    );
  console.log('\nwhat each fault did (seconds after `termlab run` was started, its start-up included):');
  for (const n of notes) console.log(`  ${n}`);
  console.log(`\nfault_suite_seconds: ${((performance.now() - suiteStarted) / 1000).toFixed(0)}`);
  console.log(`fault_checks_failed: ${failures.length}`);
  if (failures.length) {
    for (const f of failures) console.log(`  ${f}`);
    throw new TermlabError('CHECKS_FAILED', `${failures.length} fault checks failed (above)`);
  }
}

await runDevTool(tool, main);
