// The kubelet's reaction time, by its mechanism (Kubernetes 1.34):
// - pkg/kubelet/pleg/generic.go: the generic PLEG relists the runtime every genericPlegRelistPeriod
//   (1 s, kubelet.go) after the previous relist ended (wait.Until), and only at the end of a relist
//   moves the pod cache's timestamp on (cache.UpdateTime(timestamp)), to the relist's start.
// - pkg/kubelet/pod_workers.go podWorkerLoop: every sync first waits for
//   podCache.GetNewerThan(uid, lastSyncTime), a cache entry newer than the worker's previous sync
//   ("TODO: this adds ~1s of latency on all transitions from sync to terminating to terminated").
// So the kubelet acts on a DELETE, an exit or a deadline only when a relist ends; a DELETE that
// finds a sync in flight (which it cancels, but which still waits its relist) can wait for a second.
import { wallNow } from './time.ts';

export interface KubeletTiming {
  /** genericPlegRelistPeriod: the pause between the end of one relist and the start of the next. */
  relistPeriodMs: number;
  /** How long one relist takes (listing sandboxes and containers, inspecting changed pods). */
  relistDurationMs: number;
  /** Relists that end between the API's DELETE and the Killing event (the first sync's and the terminating sync's). */
  relistsBeforeKill: number;
}

/** Defaults from the real node (docs/simulated-cluster.md, "The kubelet's reaction time"). */
export const REAL_NODE_TIMING: KubeletTiming = { relistPeriodMs: 1000, relistDurationMs: 250, relistsBeforeKill: 1 };
/** A kubelet that acts at once: no relist waits (for tests of the kill sequence alone). */
export const IMMEDIATE_TIMING: KubeletTiming = { relistPeriodMs: 0, relistDurationMs: 0, relistsBeforeKill: 0 };

export class Pleg {
  private readonly timing: KubeletTiming;
  private waiters: { startedAfter: number; resolve: () => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(timing: KubeletTiming) {
    this.timing = timing;
    if (timing.relistPeriodMs > 0) this.schedule(timing.relistPeriodMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.relist(), delayMs);
    this.timer.unref();
  }

  private relist(): void {
    const startedAt = wallNow();
    const finish = () => {
      // cache.UpdateTime(startedAt): wakes every GetNewerThan older than this relist's start.
      const ready = this.waiters.filter((w) => w.startedAfter < startedAt);
      this.waiters = this.waiters.filter((w) => w.startedAfter >= startedAt);
      for (const w of ready) w.resolve();
      this.schedule(this.timing.relistPeriodMs);
    };
    if (this.timing.relistDurationMs > 0) setTimeout(finish, this.timing.relistDurationMs).unref();
    else finish();
  }

  /** podCache.GetNewerThan: resolves when a relist that started after `after` has ended. */
  newerThan(after: number): Promise<void> {
    if (this.timing.relistPeriodMs <= 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ startedAfter: after, resolve }));
  }

  /** `count` syncs in a row, each waiting for a relist newer than the previous one's end. */
  async syncs(count: number, from: number = wallNow()): Promise<void> {
    let lastSyncTime = from;
    for (let i = 0; i < count; i++) {
      await this.newerThan(lastSyncTime);
      lastSyncTime = wallNow();
    }
  }

  get relistsBeforeKill(): number {
    return this.timing.relistsBeforeKill;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    // Waiting syncs never resume: a stopped kubelet writes nothing more.
    this.waiters = [];
  }
}
