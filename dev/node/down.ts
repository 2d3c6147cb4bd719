// npm run cluster:down — stops exactly the processes cluster:up started (by their recorded PIDs),
// unmounts and removes what it created. Built programs and images stay, as a cache. Safe to repeat.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BRIDGE, binaries, RUN, STATE, paths } from './layout.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { alive } from './steps.ts';
import { ctrCommand } from './containerd.ts';
import { upVersion } from './versions.ts';

/** kube-proxy's own undo: `--cleanup` removes the KUBE-* chains and rules it made (iptables, ipvs, nftables). */
function proxyRules(kube: string): void {
  if (!existsSync(kube)) return;
  const result = spawnSync(kube, ['kube-proxy', '--cleanup', '--v=0'], { encoding: 'utf8' });
  if (result.status === 0) console.log("removed kube-proxy's rules");
  else
    console.error(
      `kube-proxy --cleanup exited ${result.status}: ${String(result.stderr || result.error?.message)
        .trim()
        .split('\n')
        .slice(-5)
        .join('\n')}`,
    );
}

// Reverse order of start.
const COMPONENTS = [
  'kube-proxy',
  'kubelet',
  'containerd',
  'kube-scheduler',
  'kube-controller-manager',
  'kube-apiserver',
  'etcd',
];

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

async function stop(name: string): Promise<void> {
  const pidFile = join(paths.pids, `${name}.pid`);
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  // A recycled PID belongs to someone else: only signal the process we started.
  const ours = commandLine(pid).includes(name === 'containerd' ? paths.containerdConfig : name);
  if (ours && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(250);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    console.log(`stopped ${name} (pid ${pid})`);
  }
  rmSync(pidFile, { force: true });
}

function containerdTasks(): void {
  if (!existsSync(paths.containerdSocket)) return;
  const ctr = (...args: string[]) =>
    spawnSync(ctrCommand(), ['--address', paths.containerdSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
  const tasks = ctr('tasks', 'ls', '-q').stdout?.trim().split('\n').filter(Boolean) ?? [];
  for (const id of tasks) ctr('tasks', 'kill', '-s', 'SIGKILL', id);
  for (const id of tasks) ctr('tasks', 'delete', '-f', id);
  if (tasks.length) console.log(`killed ${tasks.length} container task(s)`);
}

function shims(): void {
  // Shims outlive containerd; ours are the ones started with our socket.
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    const cmd = commandLine(Number(entry));
    if (cmd.includes('containerd-shim') && cmd.includes(RUN)) {
      try {
        process.kill(Number(entry), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}

function unmountOurs(): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => Boolean(m));
  const ours = mounts.filter((m) => m.startsWith(STATE) || m.startsWith(RUN)).sort((a, b) => b.length - a.length);
  for (const mount of ours) spawnSync('umount', ['-l', mount]);
  const before = existsSync(join(STATE, 'netns-before'))
    ? readFileSync(join(STATE, 'netns-before'), 'utf8').split('\n')
    : [];
  const netns = existsSync('/var/run/netns')
    ? readdirSync('/var/run/netns').filter((n) => n.startsWith('cni-') && !before.includes(n))
    : [];
  for (const name of netns) spawnSync('ip', ['netns', 'delete', name]);
  if (ours.length || netns.length)
    console.log(`unmounted ${ours.length} mount(s), removed ${netns.length} network namespace(s)`);
}

const tool = {
  name: 'cluster:down',
  usage: 'npm run cluster:down',
  // Itself the clean-up: a Ctrl-C lets it finish (a second one quits), so nothing is left half stopped.
  interrupt: 'finish',
} as const;

async function main(): Promise<void> {
  devArgs(tool, {});
  if (!existsSync(STATE) && !existsSync(RUN)) {
    console.log('nothing to stop');
    return;
  }
  // Only when this node started kube-proxy (its PID record stays until the end of cluster:down).
  const proxyStarted = existsSync(join(paths.pids, 'kube-proxy.pid'));
  const version = upVersion();
  await stop('kube-proxy');
  // The kube-proxy of the version that is up undoes its own rules.
  if (proxyStarted && version) proxyRules(binaries(version).kube);
  await stop('kubelet');
  containerdTasks();
  for (const name of COMPONENTS.slice(2)) await stop(name);
  shims();
  unmountOurs();
  if (spawnSync('ip', ['link', 'show', BRIDGE]).status === 0) spawnSync('ip', ['link', 'delete', BRIDGE]);
  // Keep the built programs, their generated modules and the images (a cache); remove all runtime state.
  const cache = new Set(['bin', 'src', 'images']);
  for (const entry of existsSync(STATE) ? readdirSync(STATE) : []) {
    if (!cache.has(entry)) rmSync(join(STATE, entry), { recursive: true, force: true });
  }
  rmSync(RUN, { recursive: true, force: true });
  console.log(`cluster:down done${version ? ` (${version})` : ''}`);
}

await runDevTool(tool, main);
