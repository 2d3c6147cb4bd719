// The faults test:cluster:faults puts on the real node, each as it happens in the field.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTEXT, paths } from './layout.ts';
import { alive, startComponent } from './steps.ts';
import { TermlabError } from '../../lib/errors.ts';

const API_READY_TIMEOUT_MS = 120_000;

function pidOf(component: string): number {
  return Number(readFileSync(join(paths.pids, `${component}.pid`), 'utf8'));
}

/** argv of a running process, read before it is killed so it can be started again the same way. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

export function kubectl(
  kubeconfig: string,
  ...args: string[]
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--context', CONTEXT, ...args], {
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

export async function apiReady(kubeconfig: string): Promise<void> {
  const until = performance.now() + API_READY_TIMEOUT_MS;
  while (performance.now() < until) {
    if (kubectl(kubeconfig, 'get', '--raw', '/readyz').status === 0) return;
    await sleep(250);
  }
  throw new TermlabError(
    'CLUSTER_UNREACHABLE',
    `kube-apiserver not ready within ${API_READY_TIMEOUT_MS / 1000}s (${kubeconfig}; npm run cluster:up brings the node up)`,
  );
}

/** kube-apiserver SIGKILLed `afterMs` into terminating and started again with the same command line `downMs` later. */
export async function killApiServer(
  kubeconfig: string,
  downMs: number,
  afterMs: number,
  log: (line: string) => void,
): Promise<void> {
  await sleep(afterMs);
  const pid = pidOf('kube-apiserver');
  const argv = commandLine(pid);
  process.kill(pid, 'SIGKILL');
  const killedAt = performance.now();
  while (alive(pid)) await sleep(20);
  log(`kube-apiserver (pid ${pid}) killed; starting it again in ${downMs / 1000}s`);
  await sleep(downMs);
  const started = startComponent('kube-apiserver', argv[0]!, argv.slice(1));
  await apiReady(kubeconfig);
  log(
    `kube-apiserver (pid ${started.pid}) serving again ${((performance.now() - killedAt) / 1000).toFixed(1)}s after the kill`,
  );
}

/** The kubelet stopped (SIGSTOP) `afterMs` into terminating, inside the hook, and continued `forMs` later. */
export async function pauseKubelet(afterMs: number, forMs: number, log: (line: string) => void): Promise<void> {
  await sleep(afterMs);
  const pid = pidOf('kubelet');
  process.kill(pid, 'SIGSTOP');
  log(`kubelet (pid ${pid}) paused for ${forMs / 1000}s`);
  try {
    await sleep(forMs);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  log('kubelet resumed');
}

/** Established TCP sockets matching an ss filter, killed (ss -K: the kernel's tcp_abort, an RST to the peer). */
function killSockets(filter: string[]): number {
  const listed = spawnSync('ss', ['-tnH', 'state', 'established', ...filter], { encoding: 'utf8' });
  const count = listed.stdout.split('\n').filter((l) => l.trim()).length;
  if (count) spawnSync('ss', ['-K', 'state', 'established', ...filter]);
  return count;
}

/**
 * A laptop's network blip: every TCP connection the termlab process holds to the API server is
 * reset (its port-forward, watch and log follows); the API stays up and answers the next call.
 */
export async function resetHarnessConnections(
  termlabPid: number,
  afterMs: number,
  log: (line: string) => void,
): Promise<void> {
  await sleep(afterMs);
  const listed = spawnSync('ss', ['-tnpH', 'state', 'established', 'dport', '= :6443'], { encoding: 'utf8' });
  const ports = listed.stdout
    .split('\n')
    .filter((l) => l.includes(`pid=${termlabPid},`))
    .map((l) => /:(\d+)\s+\S+:6443/.exec(l)?.[1])
    .filter((p): p is string => Boolean(p));
  for (const port of ports) spawnSync('ss', ['-K', 'dport', '= :6443', 'sport', `= :${port}`]);
  log(`reset ${ports.length} connection(s) of termlab (pid ${termlabPid}) to the API server`);
}

/** containerd's CRI streaming server (127.0.0.1, a random port): the node's end of every port-forward, exec and attach stream. */
function streamingPort(): string | null {
  const listed = spawnSync('ss', ['-tlnpH'], { encoding: 'utf8' });
  const line = listed.stdout.split('\n').find((l) => l.includes('"containerd"') && /127\.0\.0\.1:\d+\s/.test(l));
  return line ? /127\.0\.0\.1:(\d+)\s/.exec(line)![1]! : null;
}

/**
 * The port-forward streams alone, cut on the node: each forward is the API server proxying to the
 * kubelet, which proxies to containerd's streaming server; the kubelet's connections to it are reset.
 * The API, the watch and the log follows (the kubelet reads log files itself) are untouched, and the
 * kubelet's exec hooks go over CRI's unix socket (ExecSync), not this port.
 */
export async function resetPortForwardStreams(afterMs: number, log: (line: string) => void): Promise<void> {
  await sleep(afterMs);
  const port = streamingPort();
  if (!port) {
    log('no containerd streaming port found: nothing reset');
    return;
  }
  const count = killSockets(['(', 'dport', '=', `:${port}`, 'or', 'sport', '=', `:${port}`, ')']);
  log(
    `reset ${count} socket(s) of containerd's streaming server (127.0.0.1:${port}): the port-forward streams on the node`,
  );
}
