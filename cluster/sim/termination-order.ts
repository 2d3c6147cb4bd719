// The sidecar termination order, after pkg/kubelet/kuberuntime/kuberuntime_termination_order.go
// (1.37.2; the same in 1.34.4, 1.35.4 and 1.36.3), step by step and with its names. killContainer
// (kill.ts) waits for its turn here after the preStop hook and tells it when the container is gone.
// Written apart from harness/grade/theory.ts on purpose.
import type { PodSpec } from './pod-types.ts';
import { sleepAtLeast, wallNow } from './time.ts';

/** types.IsRestartableInitContainer: an init container whose own restartPolicy is Always (a native sidecar). */
export const isRestartableInitContainer = (c: { restartPolicy?: string }) => c.restartPolicy === 'Always';

/** types.HasRestartableInitContainer: only such a pod gets an ordering (killContainersWithSyncResult). */
export const hasRestartableInitContainer = (spec: PodSpec) =>
  (spec.initContainers ?? []).some(isRestartableInitContainer);

/** A closed channel: resolved once, and resolving it again is a no-op. */
class Channel {
  closed = false;
  private wake!: () => void;
  readonly done = new Promise<void>((resolve) => {
    this.wake = resolve;
  });
  close(): void {
    this.closed = true;
    this.wake();
  }
}

/**
 * terminationOrdering.
 * newTerminationOrdering(pod, runningContainerNames):
 * 1. A channel per main container (spec.containers), collected as the main containers' channels;
 *    a container not running has its channel closed at once, so nothing waits on it.
 * 2. The init containers in reverse order of declaration: a channel each, closed at once if not running.
 *    A restartable one waits on every main container's channel and, if a sidecar declared after it was
 *    seen (the previous one in this reverse walk), on that sidecar's channel; it becomes the previous one.
 *    Regular init containers get a channel but neither wait nor are waited on.
 */
export class TerminationOrdering {
  private readonly terminated = new Map<string, Channel>();
  private readonly prereqs = new Map<string, Channel[]>();

  constructor(spec: PodSpec, runningContainerNames: readonly string[]) {
    const running = new Set(runningContainerNames);
    const mainContainerChannels: Channel[] = [];
    for (const c of spec.containers) {
      const channel = new Channel();
      this.terminated.set(c.name, channel);
      mainContainerChannels.push(channel);
      if (!running.has(c.name)) channel.close();
    }
    let previousSidecarName: string | undefined;
    const inits = spec.initContainers ?? [];
    for (let i = 0; i < inits.length; i++) {
      const ic = inits[inits.length - i - 1]!;
      const channel = new Channel();
      this.terminated.set(ic.name, channel);
      if (!running.has(ic.name)) channel.close();
      if (isRestartableInitContainer(ic)) {
        const prereqs = [...mainContainerChannels];
        if (previousSidecarName !== undefined) prereqs.push(this.terminated.get(previousSidecarName)!);
        this.prereqs.set(ic.name, prereqs);
        previousSidecarName = ic.name;
      }
    }
  }

  /**
   * waitForTurn(name, gracePeriod): seconds waited, a float (killContainer truncates it).
   * 1. gracePeriod <= 0: no wait, 0.
   * 2. start := now; a timer of gracePeriod whole seconds (remainingGrace).
   * 3. For each prerequisite in turn: wait for its channel to close, or for the timer; on the timer,
   *    return the time since start at once (the remaining waits are skipped: "grace period expired").
   * 4. Return the time since start.
   */
  async waitForTurn(name: string, gracePeriod: number): Promise<number> {
    if (gracePeriod <= 0) return 0;
    const start = wallNow();
    let timer: NodeJS.Timeout | undefined;
    const remainingGrace = sleepAtLeast(gracePeriod * 1000, (t) => {
      timer = t;
    }).then(() => 'expired' as const);
    try {
      for (const c of this.prereqs.get(name) ?? []) {
        if (c.closed) continue;
        if ((await Promise.race([c.done.then(() => 'closed' as const), remainingGrace])) === 'expired')
          return (wallNow() - start) / 1000;
      }
      return (wallNow() - start) / 1000;
    } finally {
      clearTimeout(timer);
    }
  }

  /** containerTerminated(name): closes the container's channel once (called after StopContainer returned). */
  containerTerminated(name: string): void {
    const channel = this.terminated.get(name);
    if (!channel) return;
    channel.close();
    this.terminated.delete(name);
  }
}
