// What bench:verify and bench:edge share: a simulated cluster as its own process (as `termlab sim`
// runs it), the lab's load generator (LAB_MODE=load, the very bundle the sim's pods run) as a process
// of its own, and the overhead of a load path measured from each request's due time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as k8s from '@kubernetes/client-node';
import { labServerBundle } from '../cluster/sim/runtime.ts';
import type { LoadRecord } from '../server/load.ts';
import { percentile } from './stats.ts';

/** The rate asked (BENCH_RATE), the counted rounds per path (BENCH_ROUNDS), the server's work per request. */
export const RATE = Number(process.env.BENCH_RATE ?? 1000);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const WORK_MS = 20;
/** Enough connections for the rate at a few times the work's duration: the pool never holds a request back. */
export const CONNECTIONS = Math.min(1024, Math.ceil((RATE * WORK_MS * 8) / 1000) + 32);

export interface BenchSim {
  dir: string;
  kubeconfig: string;
  kc: k8s.KubeConfig;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `termlab sim` in its own process; `simArgs` e.g. --edge; BENCH_SIM_NODE_ARGS e.g. --cpu-prof to profile it;
 * `root` another checkout's (a baseline to compare against in the same run).
 */
export async function startBenchSim(name: string, simArgs: string[] = [], root = '.'): Promise<BenchSim> {
  const nodeArgs = process.env.BENCH_SIM_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const dir = mkdtempSync(join(tmpdir(), `termlab-bench-${name}-`));
  const kubeconfig = join(dir, 'kubeconfig');
  const sim = spawn(
    process.execPath,
    [...nodeArgs, join(root, 'bin/termlab.js'), 'sim', '--port', '0', '--kubeconfig-out', kubeconfig, ...simArgs],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: sim.stdout! });
  for await (const line of lines) if (line.includes(' listening on ')) break;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return {
    dir,
    kubeconfig,
    kc,
    pid: sim.pid!,
    async stop() {
      sim.kill('SIGINT');
      if (sim.exitCode === null && sim.signalCode === null) await once(sim, 'exit');
      if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
      else console.log(`kept: ${dir}`);
    },
  };
}

/** The host port a running pod's containerPort is published on (the sim's stand-in for podIP:port). */
export async function podHostPort(kc: k8s.KubeConfig, namespace: string, selector: string): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
  const pod = pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  const port = pod?.spec?.containers[0]?.ports?.[0]?.hostPort;
  if (!port) throw new Error(`no running pod with a published port for ${namespace}/${selector}`);
  return port;
}

export async function nodePort(kc: k8s.KubeConfig, namespace: string, name: string): Promise<number> {
  const svc = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedService({ namespace, name });
  const port = svc.spec?.ports?.[0]?.nodePort;
  if (!port) throw new Error(`Service ${namespace}/${name} has no nodePort`);
  return port;
}

export interface LoadPlan {
  target: string;
  rate: number;
  durationMs: number;
  workMs: number;
  connections: number;
  /** More of the generator's env (LOAD_KEEPALIVE, LOAD_HOST once the generator has them). */
  env?: Record<string, string>;
}

/** One run of the load generator as a process; its request records, parsed from its stdout. */
export async function runLoadProcess(plan: LoadPlan): Promise<LoadRecord[]> {
  const child = spawn(process.execPath, [await labServerBundle()], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      LAB_MODE: 'load',
      LOAD_TARGET: plan.target,
      LOAD_RATE: String(plan.rate),
      LOAD_DURATION_MS: String(plan.durationMs),
      LOAD_WORK_MS: String(plan.workMs),
      LOAD_CONNECTIONS: String(plan.connections),
      ...plan.env,
    },
  });
  const records: LoadRecord[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    if (!line.includes('"event":"request"')) continue;
    records.push(JSON.parse(line) as LoadRecord);
  }
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  if (child.exitCode !== 0) throw new Error(`the load generator exited ${child.exitCode ?? child.signalCode}`);
  return records;
}

export interface PathFigures {
  requests: number;
  failed: number;
  perSecond: number;
  /** A completed request's time from its due time, beyond the server's work (ms). */
  overhead: number[];
  failedAs: Map<string, number>;
  /** Requests sent on a reused connection; null when the generator does not say (no keep-alive: contract C4). */
  reused: number | null;
  /** CPU the path's cpuPid spent over its rounds (ms); null when not measured. */
  cpuMs: number | null;
}

export function pathFigures(records: LoadRecord[], workMs: number): PathFigures {
  const completed = records.filter((r) => r.outcome === 'completed');
  const sends = records.map((r) => r.sent.mono);
  const span = (Math.max(...sends) - Math.min(...sends)) / 1000;
  const failedAs = new Map<string, number>();
  for (const r of records)
    if (r.outcome !== 'completed') {
      const k = `${r.outcome}/${r.errorCode}/${r.stage}`;
      failedAs.set(k, (failedAs.get(k) ?? 0) + 1);
    }
  return {
    requests: records.length,
    failed: records.length - completed.length,
    perSecond: span > 0 ? (records.length - 1) / span : Number.NaN,
    // From the due time, not the send: a generator that falls behind cannot hide it (coordinated omission).
    overhead: completed.map((r) => r.ended.mono - r.dueMono - workMs),
    failedAs,
    reused: records.some((r) => 'reused' in r)
      ? records.filter((r) => (r as { reused?: unknown }).reused === true).length
      : null,
    cpuMs: null,
  };
}

export function mergeFigures(a: PathFigures, b: PathFigures): PathFigures {
  const failedAs = new Map(a.failedAs);
  for (const [k, n] of b.failedAs) failedAs.set(k, (failedAs.get(k) ?? 0) + n);
  const requests = a.requests + b.requests;
  return {
    requests,
    failed: a.failed + b.failed,
    perSecond: (a.perSecond * a.requests + b.perSecond * b.requests) / requests,
    overhead: [...a.overhead, ...b.overhead],
    failedAs,
    reused: a.reused === null || b.reused === null ? null : a.reused + b.reused,
    cpuMs: a.cpuMs === null || b.cpuMs === null ? null : a.cpuMs + b.cpuMs,
  };
}

export const ms = (n: number) => n.toFixed(2);

/** `name: value` lines for one path; `base`, when given, the straight path its overhead is beyond. */
export function printPath(name: string, f: PathFigures, base?: PathFigures): void {
  console.log(`${name}.requests: ${f.requests}`);
  console.log(`${name}.requests_failed: ${f.failed}`);
  console.log(`${name}.requests_per_s: ${f.perSecond.toFixed(1)}`);
  for (const q of [0.5, 0.95, 0.99]) {
    const label = `p${Math.round(q * 100)}`;
    console.log(`${name}.overhead_ms_${label}: ${ms(percentile(f.overhead, q))}`);
    if (base) console.log(`${name}.added_ms_${label}: ${ms(percentile(f.overhead, q) - percentile(base.overhead, q))}`);
  }
  if (f.cpuMs !== null) console.log(`${name}.sim_cpu_us_per_request: ${((f.cpuMs * 1000) / f.requests).toFixed(0)}`);
  for (const [k, n] of f.failedAs) console.log(`${name}.requests_failed_as.${k}: ${n}`);
}

/** The machine's load beside the figures: a busy machine's numbers are not a quiet one's. */
export function printMachine(): void {
  console.log(`machine_loadavg_1m: ${loadavg()[0]!.toFixed(2)}`);
}

const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);

export interface PathTarget {
  name: string;
  target: string;
  env?: Record<string, string>;
  /** The process whose CPU a round of this path is charged to (the sim's): its cost per request. */
  cpuPid?: number;
}

/** User + system CPU of a process so far, in ms (Linux's /proc; null elsewhere). */
export function processCpuMs(pid: number): number | null {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_S = 100;

/**
 * The same generator over each path in turn, `rounds` times (straight, proxy, straight, proxy…), so a
 * change in the machine's load falls on every path alike; figures merged per path.
 */
export async function alternate(
  paths: PathTarget[],
  rounds: number,
  plan: Omit<LoadPlan, 'target' | 'env'>,
): Promise<Map<string, PathFigures>> {
  const out = new Map<string, PathFigures>();
  // A short round on each path first, not counted: the first thousands of connections through a fresh
  // thread (the proxy's worker, the edge's process) run its code before the JIT has compiled it.
  for (const p of paths) await runLoadProcess({ ...plan, durationMs: WARMUP_MS, target: p.target, env: p.env });
  for (let round = 0; round < rounds; round++)
    for (const p of paths) {
      const cpuBefore = p.cpuPid === undefined ? null : processCpuMs(p.cpuPid);
      const records = await runLoadProcess({ ...plan, target: p.target, env: p.env });
      const cpuAfter = p.cpuPid === undefined ? null : processCpuMs(p.cpuPid);
      const f = pathFigures(records, plan.workMs);
      f.cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
      // Each round's own, for a noisy machine: a burst elsewhere shows as one round out of line.
      console.log(
        `round.${round}.${p.name}: p50 ${ms(percentile(f.overhead, 0.5))} p95 ${ms(percentile(f.overhead, 0.95))} ms, ${f.perSecond.toFixed(0)}/s, load ${loadavg()[0]!.toFixed(1)}`,
      );
      const had = out.get(p.name);
      out.set(p.name, had ? mergeFigures(had, f) : f);
    }
  return out;
}

/** The bound (#42): the sim's Service proxy, and its edge, add at most this at p95 at 1,000 requests/s. */
export const ADDED_P95_BOUND_MS = 2;

export function printAgainstBound(name: string, f: PathFigures, base: PathFigures): void {
  const added = percentile(f.overhead, 0.95) - percentile(base.overhead, 0.95);
  console.log(`${name}_added_ms_p95: ${ms(added)}`);
  console.log(`${name}_added_ms_p95_bound: ${ADDED_P95_BOUND_MS}`);
  console.log(`${name}_within_bound: ${added <= ADDED_P95_BOUND_MS ? 'yes' : 'no'}`);
}
