// npm run test:cluster:faults — the runner against a real control plane that fails, on the default
// transport (portforward, which rides the API server) first, then direct: kube-apiserver SIGKILLed
// and started again with the same command line after 3 s and after 20 s, at three points (before
// the kubelet has seen the delete, during the hook, after TERM); the kubelet paused (SIGSTOP/SIGCONT)
// during the hook; the harness's own connections to the API reset alone (a laptop's network blip,
// the API healthy); and the API kept down past --api-patience (exit 3, then `termlab reap`).
// Prints a table fault × transport × verdict. Needs `npm run cluster:up` first, as test:cluster.
// `-- --full` runs that whole matrix. Without it (what CI runs) only the cases seen to pass on the
// node so far: direct, the API killed during the hook, the kubelet paused — CI moves to the full
// matrix only once it has been seen to pass on the real node (issue 21).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTEXT, REPO, paths } from './layout.ts';
import { alive, startComponent } from './steps.ts';

const SCENARIOS = 'restored-grace,short-grace';
const OWNER = 'faults';
/**
 * portforward (the default, and a student's only way in from a laptop) rides the API server, so an
 * outage cuts the request itself; direct reaches the pod IP over the node's bridge and does not.
 */
const FULL = process.argv.includes('--full');
/** `--case a,b`: only the fault cases named (and their baseline), for a quick look at one row. */
const CASES = (() => { const i = process.argv.indexOf('--case'); return i >= 0 ? new Set((process.argv[i + 1] ?? '').split(',')) : null; })();
const TRANSPORT_ONLY = (() => { const i = process.argv.indexOf('--transport'); return i >= 0 ? process.argv[i + 1] as 'portforward' | 'direct' : null; })();
type Transport = 'portforward' | 'direct';
const TRANSPORTS: Transport[] = TRANSPORT_ONLY ? [TRANSPORT_ONLY] : FULL ? ['portforward', 'direct'] : ['direct'];
/** The kubelet starts the hook about 1.6 s after the delete on this node (docs/ci-node.md); pause it inside. */
const KUBELET_PAUSE_AFTER_TERMINATING_MS = 2_000;
const KUBELET_PAUSE_MS = 5_000;
/**
 * The kill comes this long after the delete: once the kubelet has seen it and started the hook.
 * Killed before the kubelet's own watch delivered the deletion, the kubelet starts the whole
 * termination only when the API is back — a cluster effect the runner cannot undo (seen on this node).
 */
const API_KILL_AFTER_TERMINATING_MS = 2_500;
/** The three points of an API outage, after the terminating phase began (docs/ci-node.md: the hook starts ~1.6 s after the delete, lasts 3 s). */
const ALL_KILL_POINTS = [
  { name: 'before-kubelet', ms: 0 },
  { name: 'during-hook', ms: API_KILL_AFTER_TERMINATING_MS },
  { name: 'after-term', ms: 6_000 },
];
const KILL_POINTS = FULL ? ALL_KILL_POINTS : ALL_KILL_POINTS.filter((p) => p.name === 'during-hook');
const SHORT_OUTAGE_MS = 3_000;
const LONG_OUTAGE_MS = 20_000;
/** For the case past the budget: a short patience and an outage well beyond it. */
const SHORT_PATIENCE_SECONDS = 10;
const PAST_PATIENCE_OUTAGE_MS = 30_000;
/** The issue's bar: no termlab pod left this long after a run ends. */
const PODS_GONE_WITHIN_MS = 10_000;
const API_READY_TIMEOUT_MS = 120_000;

const stateDir = mkdtempSync(join(tmpdir(), 'termlab-faults-'));
/** The node's kubeconfig: this checkout's, or another's (TERMLAB_NODE_KUBECONFIG) when that checkout brought the node up. */
const kubeconfig = process.env.TERMLAB_NODE_KUBECONFIG ?? paths.kubeconfig;
const failures: string[] = [];

function pidOf(component: string): number {
  return Number(readFileSync(join(paths.pids, `${component}.pid`), 'utf8'));
}

/** argv of a running process, read before it is killed so it can be started again the same way. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

function kubectl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--context', CONTEXT, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

async function apiReady(): Promise<void> {
  const until = performance.now() + API_READY_TIMEOUT_MS;
  while (performance.now() < until) {
    if (kubectl('get', '--raw', '/readyz').status === 0) return;
    await sleep(250);
  }
  throw new Error(`kube-apiserver not ready within ${API_READY_TIMEOUT_MS / 1000}s`);
}

async function killApiServer(downMs: number, afterMs = API_KILL_AFTER_TERMINATING_MS): Promise<void> {
  await sleep(afterMs);
  const pid = pidOf('kube-apiserver');
  const argv = commandLine(pid);
  process.kill(pid, 'SIGKILL');
  const killedAt = performance.now();
  while (alive(pid)) await sleep(20);
  console.log(`  kube-apiserver (pid ${pid}) killed; starting it again in ${downMs / 1000}s`);
  await sleep(downMs);
  const started = startComponent('kube-apiserver', argv[0]!, argv.slice(1));
  await apiReady();
  console.log(`  kube-apiserver (pid ${started.pid}) serving again ${((performance.now() - killedAt) / 1000).toFixed(1)}s after the kill`);
}

async function pauseKubelet(): Promise<void> {
  await sleep(KUBELET_PAUSE_AFTER_TERMINATING_MS);
  const pid = pidOf('kubelet');
  process.kill(pid, 'SIGSTOP');
  console.log(`  kubelet (pid ${pid}) paused for ${KUBELET_PAUSE_MS / 1000}s`);
  try { await sleep(KUBELET_PAUSE_MS); } finally { process.kill(pid, 'SIGCONT'); }
  console.log('  kubelet resumed');
}

/**
 * A network blip on the harness's side alone: every TCP connection the termlab process holds to
 * the API server is reset (ss -K), its port-forward and watch among them; the API stays up.
 */
async function resetHarnessConnections(termlabPid: number): Promise<void> {
  await sleep(API_KILL_AFTER_TERMINATING_MS);
  const listed = spawnSync('ss', ['-tnpH', 'state', 'established', 'dport', '= :6443'], { encoding: 'utf8' });
  const ports = listed.stdout.split('\n').filter((l) => l.includes(`pid=${termlabPid},`)).map((l) => /:(\d+)\s+\S+:6443/.exec(l)?.[1]).filter((p): p is string => Boolean(p));
  for (const port of ports) spawnSync('ss', ['-K', 'dport', '= :6443', 'sport', `= :${port}`]);
  console.log(`  reset ${ports.length} connection(s) of termlab (pid ${termlabPid}) to the API server`);
}

interface RunResult { code: number | null; stdout: string; stderr: string; verdicts: Record<string, string>; endedAt: number }

/** Runs `termlab run`, calling `fault` once the first scenario reaches the terminating phase. */
async function termlabRun(name: string, transport: Transport, extra: string[], fault?: (termlabPid: number) => Promise<void>): Promise<RunResult> {
  const out = join(REPO, 'reports', 'node-faults', transport, name);
  const child = spawn(process.execPath, ['--import', 'tsx', 'harness/cli.ts', 'run', '--kubeconfig', kubeconfig, '--context', CONTEXT,
    '--only', SCENARIOS, '--owner', OWNER, '--transport', transport, '--out', out, ...extra],
  { cwd: REPO, env: { ...process.env, TERMLAB_STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let injected: Promise<void> | null = null;
  child.stderr.on('data', (c: Buffer) => { stderr += c; process.stderr.write(c); });
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
    process.stdout.write(c.toString().replace(/^(?=.)/gm, '  | '));
    if (fault && !injected && /\bterminating\b/.test(stdout)) injected = fault(child.pid!);
  });
  const code: number | null = await new Promise((resolve) => child.on('close', resolve));
  const endedAt = performance.now();
  await injected;
  const verdicts: Record<string, string> = {};
  for (const file of (existsSync(out) ? readdirSync(out) : []).filter((f) => f.endsWith('.observation.json') && !f.includes('.attempt-'))) {
    const scenario = file.replace('.observation.json', '');
    // The last try's row counts (a try whose request was lost ran again): "name" or "name (try N)".
    const rows = stdout.split('\n').filter((l) => l.startsWith(`${scenario} `));
    const row = rows.filter((l) => !l.includes('tried again')).at(-1);
    const verdict = row?.match(/(matches the model|differs from the model|inconclusive[^\n]*|evidence [a-z]+)/)?.[1] ?? '?';
    verdicts[scenario] = rows.length > 1 ? `${verdict} (after ${rows.length - 1} retry)` : verdict;
  }
  return { code, stdout, stderr, verdicts, endedAt };
}

async function podsGoneWithin(endedAt: number): Promise<number | null> {
  for (;;) {
    const left = kubectl('get', 'pods', '-A', '-l', 'app.kubernetes.io/managed-by=termlab', '-o', 'name');
    if (left.status === 0 && left.stdout.trim() === '') return (performance.now() - endedAt) / 1000;
    if (performance.now() - endedAt > PODS_GONE_WITHIN_MS) return null;
    await sleep(250);
  }
}

function check(name: string, ok: boolean, detail: string): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  if (!ok) failures.push(`${name}: ${detail}`);
}

/** fault × transport × scenario → verdict, printed at the end. */
const table: { fault: string; transport: Transport; scenario: string; verdict: string; exit: number | null }[] = [];

async function faultCase(name: string, transport: Transport, baseline: Record<string, string> | null, fault: (termlabPid: number) => Promise<void>, extra: string[] = []): Promise<Record<string, string>> {
  if (CASES && !CASES.has(name)) return {};
  console.log(`\n▶ ${name} (${transport})`);
  const run = await termlabRun(name, transport, extra, fault);
  for (const [scenario, verdict] of Object.entries(run.verdicts)) table.push({ fault: name, transport, scenario, verdict, exit: run.code });
  name = `${name} ${transport}`;
  check(`${name} exit`, run.code === 0 || run.code === 1, `exit ${run.code}${run.code === 70 ? ` (internal error: ${run.stderr.trim().split('\n')[0]})` : ''}`);
  check(`${name} no stack trace`, !/\n\s+at /.test(run.stderr), run.stderr.trim().split('\n')[0] || 'stderr empty');
  if (baseline) {
    for (const [scenario, verdict] of Object.entries(run.verdicts)) {
      // The kubelet's verdict (after a retry if need be) or an honest inconclusive; never differs or invalid.
      const same = verdict.replace(/ \(after .*\)$/, '') === baseline[scenario] || verdict.startsWith('inconclusive');
      check(`${name} ${scenario} verdict`, same, `${verdict} (without the fault: ${baseline[scenario]})`);
    }
  }
  const gone = await podsGoneWithin(run.endedAt);
  check(`${name} pods gone`, gone !== null, gone === null ? `termlab pods still listed ${PODS_GONE_WITHIN_MS / 1000}s after the run` : `within ${gone.toFixed(1)}s of the run's end`);
  console.log(`fault_${name.replace(/[- ]/g, '_')}_exit: ${run.code}`);
  return run.verdicts;
}

async function main(): Promise<void> {
  await apiReady();
  for (const transport of TRANSPORTS) {
    console.log(`\n▶ baseline (no fault, ${transport})`);
    const baselineRun = await termlabRun('baseline', transport, []);
    check(`baseline ${transport} exit`, baselineRun.code === 0 || baselineRun.code === 1, `exit ${baselineRun.code}`);
    const baseline = baselineRun.verdicts;
    for (const [label, downMs] of [['3s', SHORT_OUTAGE_MS], ['20s', LONG_OUTAGE_MS]] as const) {
      for (const point of KILL_POINTS) await faultCase(`api-down-${label}-${point.name}`, transport, baseline, () => killApiServer(downMs, point.ms));
    }
    // A paused kubelet changes the timing itself: only exit codes and cleanup are checked.
    await faultCase('kubelet-paused-5s', transport, null, pauseKubelet);
    if (FULL) await faultCase('harness-connections-reset', transport, baseline, resetHarnessConnections);
  }

  console.log('\nfault                               transport    scenario        exit  verdict');
  for (const row of table) console.log(`${row.fault.padEnd(36)}${row.transport.padEnd(13)}${row.scenario.padEnd(16)}${String(row.exit).padEnd(6)}${row.verdict}`);

  if (CASES && !CASES.has('api-down-past-patience')) {
    console.log(`\nfault_checks_failed: ${failures.length}`);
    if (failures.length) { for (const f of failures) console.log(`  ${f}`); process.exitCode = 1; }
    return;
  }
  console.log(`\n▶ api-down-past-patience (--api-patience ${SHORT_PATIENCE_SECONDS})`);
  const past = await termlabRun('api-down-past-patience', 'direct', ['--api-patience', String(SHORT_PATIENCE_SECONDS)], () => killApiServer(PAST_PATIENCE_OUTAGE_MS));
  const message = past.stderr.trim().split('\n').filter(Boolean);
  check('past-patience exit', past.code === 3, `exit ${past.code}`);
  check('past-patience message', message.length === 1 && /pods left in \S+: tl-/.test(message[0]!) && !/\n\s+at /.test(past.stderr), message.join(' / ') || 'no message');
  await apiReady();
  const reap = spawnSync(process.execPath, ['--import', 'tsx', 'harness/cli.ts', 'reap', '--kubeconfig', kubeconfig, '--context', CONTEXT, '--owner', OWNER],
    { cwd: REPO, env: { ...process.env, TERMLAB_STATE_DIR: stateDir }, encoding: 'utf8' });
  process.stdout.write(reap.stdout.replace(/^(?=.)/gm, '  | '));
  check('reap after the outage', reap.status === 0, `exit ${reap.status}`);
  const gone = await podsGoneWithin(performance.now());
  check('reap removed them', gone !== null, gone === null ? 'termlab pods still listed' : `gone ${gone.toFixed(1)}s after reap`);

  console.log(`\nfault_checks_failed: ${failures.length}`);
  if (failures.length) { for (const f of failures) console.log(`  ${f}`); process.exitCode = 1; }
}

await main();
