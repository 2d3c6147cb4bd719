// The kubelet's kill sequence, after pkg/kubelet/kuberuntime/kuberuntime_container.go (1.34; the same
// killContainer in 1.35.4, 1.36.3, 1.37.2 and v1.38.0-beta.0), step by step and with its names. Written apart from
// harness/grade/theory.ts on purpose.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { spawnInContainer } from './exec.ts';
import type { Lifecycle, LifecycleHandler } from './pod-types.ts';
import { CONNECTION_REFUSED } from './prober.ts';
import { type ContainerProcess, type ImageEntry, stopSignalOf } from './runtime.ts';
import type { TerminationOrdering } from './termination-order.ts';
import type { ContainerTruth } from './truth.ts';
import { sleepAtLeast, wallNow } from './time.ts';

export const minimumGracePeriodInSeconds = 2;

export interface KillContext {
  containerName: string;
  container: ContainerProcess;
  lifecycle: Lifecycle | undefined;
  /** The kubelet's portTarget for a port number or name of this container. */
  portTarget(port: number | string): { host: string; port: number } | undefined;
  env: Record<string, string>;
  image: ImageEntry;
  /** This container's own record. */
  truth: ContainerTruth;
  /** The pod's record too, for the container whose times it keeps (spec.containers[0]). */
  podTruth?: ContainerTruth;
  /** The pod's sidecar order (killContainersWithSyncResult makes one only for a pod with a restartable init container). */
  ordering?: TerminationOrdering;
  /** The runtime's stop signal for this container (kuberuntime.ts): what StopContainer sends first. */
  stopSignal: string;
  ignoreSigterm: boolean;
  recordEvent(type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Resolves once the kubelet runs: at once, unless it is stopped (the pause-kubelet fault). */
  kubeletRunning?(): Promise<void>;
}

/** Writes to the container's record and, for the container the pod's record follows, to that one too. */
function note(ctx: KillContext, fields: Partial<ContainerTruth>): void {
  Object.assign(ctx.truth, fields);
  if (ctx.podTruth) Object.assign(ctx.podTruth, fields);
}

/**
 * killContainer:
 * 1. Event Killing: "Stopping container <name>".
 * 2. If the container has a preStop hook and gracePeriod > 0:
 *    gracePeriod = gracePeriod - executePreStopHook(...)   (whole seconds elapsed)
 *    The hook runs at once, before the container waits for its turn: a sidecar's beside the app's.
 * 3. If there is an ordering (the pod has a restartable init container) and gracePeriod > 0:
 *    gracePeriod -= int64(ordering.waitForTurn(name, gracePeriod))   (the wait truncated to whole seconds)
 * 4. If gracePeriod < minimumGracePeriodInSeconds, it becomes minimumGracePeriodInSeconds
 *    (the one-off 2 s extension when a hook, or the wait, outlasts the grace).
 * 5. StopContainer(gracePeriod): the runtime's stop signal (lifecycle.stopSignal when its gate is on), then
 *    SIGKILL once gracePeriod seconds pass.
 * 6. If there is an ordering: containerTerminated(name), so the sidecars waiting on it may go.
 *    (Only when StopContainer returned without error; the sim's does not fail.)
 */
export async function killContainer(ctx: KillContext, gracePeriod: number): Promise<void> {
  ctx.recordEvent('Normal', 'Killing', `Stopping container ${ctx.containerName}`);
  const killingAt = wallNow();
  ctx.truth.killingAt ??= killingAt;
  if (ctx.podTruth) ctx.podTruth.killingAt ??= killingAt;
  const preStop = ctx.lifecycle?.preStop;
  if (preStop && gracePeriod > 0) {
    gracePeriod = gracePeriod - (await executePreStopHook(ctx, preStop, gracePeriod));
  }
  if (ctx.ordering && gracePeriod > 0) {
    const waited = await ctx.ordering.waitForTurn(ctx.containerName, gracePeriod);
    // A stopped kubelet's goroutine goes on only once it runs again; the pause counts as waited.
    await ctx.kubeletRunning?.();
    note(ctx, { turnWaitSeconds: waited });
    gracePeriod -= Math.trunc(waited);
  }
  if (gracePeriod < minimumGracePeriodInSeconds) {
    gracePeriod = minimumGracePeriodInSeconds;
  }
  note(ctx, { stopGracePeriodSeconds: gracePeriod });
  await stopContainer(ctx, gracePeriod);
  ctx.ordering?.containerTerminated(ctx.containerName);
}

/**
 * executePreStopHook:
 * 1. start := now; run the hook in its own goroutine.
 * 2. Wait for it, or for gracePeriod seconds, whichever is first. The hook is not cancelled.
 * 3. A failed hook gives a Warning event FailedPreStopHook; termination goes on.
 * 4. Return int64(now - start).Seconds(): whole seconds, truncated.
 */
export async function executePreStopHook(
  ctx: KillContext,
  preStop: LifecycleHandler,
  gracePeriod: number,
): Promise<number> {
  const start = wallNow();
  note(ctx, { hookStartAt: start });
  const done = runHandler(ctx, preStop).then(
    () => {
      note(ctx, { hookEndAt: wallNow() });
    },
    (error: Error) => {
      note(ctx, { hookEndAt: wallNow() });
      ctx.recordEvent('Warning', 'FailedPreStopHook', `PreStopHook failed: ${error.message}`);
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    done.then(() => false),
    sleepAtLeast(gracePeriod * 1000, (t) => {
      timer = t;
    }).then(() => true),
  ]);
  clearTimeout(timer);
  // A stopped kubelet learns of the hook's end (or its own timer) when it runs again; the pause counts as elapsed.
  await ctx.kubeletRunning?.();
  const elapsed = Math.trunc((wallNow() - start) / 1000);
  note(ctx, { hookTimedOut: timedOut, hookElapsedSeconds: elapsed });
  return elapsed;
}

/**
 * The SIGKILL at a deadline fixed at TERM, sent by a process of its own (sh: sleep, then kill). The real
 * kubelet's stop timeout runs in the runtime (containerd's StopContainer timer), untouched by a busy kubelet;
 * a timer on this event loop fires late when the loop is starved (check:model saw a kill 0.31 s late under
 * load). Cancelled when the container exits first; if sh cannot start, the in-process timer still kills.
 */
export function killWatchdog(pid: number, deadline: number): { cancel(): void; killed: Promise<boolean> } {
  const seconds = (Math.max(0, deadline - wallNow()) / 1000).toFixed(3);
  // A process group of its own, so that cancelling ends its sleep too: killing sh alone left the sleep
  // holding the stdout pipe, and with it this process alive, until the grace had run out.
  const dog = spawn(
    '/bin/sh',
    ['-c', 'sleep "$1" && kill -KILL "$2" 2>/dev/null && echo killed', 'kill-watchdog', seconds, String(pid)],
    { stdio: ['ignore', 'pipe', 'ignore'], detached: true },
  );
  let out = '';
  dog.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const killed = new Promise<boolean>((resolve) => {
    dog.on('error', () => resolve(false));
    dog.on('close', () => resolve(out.includes('killed')));
  });
  const cancel = () => {
    if (dog.pid === undefined || dog.exitCode !== null || dog.signalCode !== null) return;
    try {
      process.kill(-dog.pid, 'SIGKILL');
    } catch {
      /* the group is gone already */
    }
  };
  return { killed, cancel };
}

/**
 * StopContainer (containerd internal/cri/server/container_stop.go): the container's stop signal (its CRI config's,
 * else the image's STOPSIGNAL, else SIGTERM), wait gracePeriod seconds, then SIGKILL.
 */
async function stopContainer(ctx: KillContext, gracePeriod: number): Promise<void> {
  if (ctx.container.hasExited) return;
  if (ctx.ignoreSigterm) note(ctx, { termSuppressed: true });
  else ctx.container.signal(stopSignalOf(ctx.stopSignal));
  const termSentAt = wallNow();
  note(ctx, { termSentAt, stopSignal: ctx.stopSignal });
  const deadline = termSentAt + gracePeriod * 1000;
  const pid = ctx.container.pid;
  const watchdog =
    pid === undefined ? { cancel: () => {}, killed: Promise.resolve(false) } : killWatchdog(pid, deadline);
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    ctx.container.exited,
    sleepAtLeast(gracePeriod * 1000, (t) => {
      timer = t;
    }).then(() => null),
  ]);
  clearTimeout(timer);
  // Ended within the grace, on its own or by the OOM killer.
  if (exit && exit.wallMs < deadline) return watchdog.cancel();
  let sentAt: number | undefined;
  if (!exit) {
    sentAt = wallNow();
    ctx.container.signal('SIGKILL');
    await ctx.container.exited;
  }
  watchdog.cancel();
  // The watchdog's kill was at the deadline, whenever this loop got to see it.
  note(ctx, { killSentAt: (await watchdog.killed) ? deadline : sentAt });
}

/** pkg/kubelet/lifecycle/handlers.go: exec, httpGet and sleep; tcpSocket is not supported. */
function runHandler(ctx: KillContext, handler: LifecycleHandler): Promise<void> {
  if (handler.exec) return runExec(ctx, handler.exec.command ?? []);
  if (handler.httpGet) return runHttpGet(ctx, handler.httpGet);
  if (handler.sleep) return sleepAtLeast(Number(handler.sleep.seconds ?? 0) * 1000);
  if (handler.tcpSocket) return Promise.reject(new Error('tcpSocket is not supported for lifecycle hooks'));
  return Promise.reject(new Error('the hook has no handler'));
}

function runExec(ctx: KillContext, command: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // Inside a container the hook appends to /proc/1/fd/1, PID 1's stdout; here, to the container's log file.
    const env = { ...ctx.env, LAB_HOOK_LOG: ctx.container.stdoutPath };
    // The one way into a container (kubectl exec uses it too); its own process group, so that it
    // and whatever it started can be killed together.
    const child = spawnInContainer(ctx, command, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    // An exec runs inside the container: when the container dies, so does the hook, and the exec fails.
    void ctx.container.exited.then(() => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      if (output.length < 4096) output += chunk.toString();
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`command '${command.join(' ')}' exited with ${code ?? signal}: ${output.trim()}`)),
    );
  });
}

function runHttpGet(ctx: KillContext, get: NonNullable<LifecycleHandler['httpGet']>): Promise<void> {
  // A hook naming a host of its own goes there; otherwise to the pod's port, wherever the node publishes it.
  const target = get.host ? { host: String(get.host), port: Number(get.port) } : ctx.portTarget(get.port);
  if (!target)
    return Promise.reject(new Error(`Get "http://pod:${get.port}${get.path ?? '/'}": ${CONNECTION_REFUSED}`));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.host, port: target.port, path: get.path ?? '/', method: 'GET', agent: false },
      (res) => {
        res.resume();
        res.on('end', () => ((res.statusCode ?? 0) < 400 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
