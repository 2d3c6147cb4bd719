// The kubelet's reaction time, by its mechanism (Kubernetes 1.34):
// - pkg/kubelet/pleg/generic.go: the generic PLEG relists the runtime every genericPlegRelistPeriod
//   (1 s, kubelet.go) after the previous relist ended (wait.Until), and only at the end of a relist
//   moves the pod cache's timestamp on (cache.UpdateTime(timestamp)), to the relist's start.
// - pkg/kubelet/pod_workers.go podWorkerLoop: every sync first waits for
//   podCache.GetNewerThan(uid, lastSyncTime), a cache entry newer than the worker's previous sync
//   ("TODO: this adds ~1s of latency on all transitions from sync to terminating to terminated").
// pod-worker.ts keeps each pod's lastSyncTime and waits here; this file is the relist and the cache's clock.
import { wallNow } from './time.ts';

export interface KubeletTiming {
  /** genericPlegRelistPeriod: the pause between the end of one relist and the start of the next. */
  relistPeriodMs: number;
  /** How long one relist takes (listing sandboxes and containers, inspecting changed pods). */
  relistDurationMs: number;
  /** syncLoop's syncTicker (kubelet.go): how often pods that asked for it (an exceeded deadline) are synced. */
  syncTickMs: number;
  /** The container runtime's own time (containerd + CNI on the real node), spent inside the kubelet's syncs. */
  runtime: RuntimeTiming;
}

export interface RuntimeTiming {
  /** RunPodSandbox: the pause container and its network. */
  runPodSandboxMs: number;
  /** CreateContainer and StartContainer. */
  startContainerMs: number;
  /** From the container's exit to killPod's return: StopContainer's exit handling, StopPodSandbox, GetPodStatus. */
  killPodReturnMs: number;
}

/** Measured on the real node (docs/simulated-cluster.md, "The kubelet's reaction time"). */
export const REAL_NODE_TIMING: KubeletTiming = {
  relistPeriodMs: 1000, relistDurationMs: 4, syncTickMs: 1000,
  runtime: { runPodSandboxMs: 190, startContainerMs: 90, killPodReturnMs: 170 },
};
/** A kubelet that acts at once: no relist waits, no runtime time (for tests of the kill sequence alone). */
export const IMMEDIATE_TIMING: KubeletTiming = {
  relistPeriodMs: 0, relistDurationMs: 0, syncTickMs: 1000, runtime: { runPodSandboxMs: 0, startContainerMs: 0, killPodReturnMs: 0 },
};

export class Pleg {
  private readonly timing: KubeletTiming;
  private waiters: { startedAfter: number; resolve: () => void }[] = [];
  /** cache.UpdateTime's timestamp: when the last completed relist started. */
  private cacheTimestamp = Number.NEGATIVE_INFINITY;
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
      this.cacheTimestamp = startedAt;
      const ready = this.waiters.filter((w) => w.startedAfter < startedAt);
      this.waiters = this.waiters.filter((w) => w.startedAfter >= startedAt);
      for (const w of ready) w.resolve();
      this.schedule(this.timing.relistPeriodMs);
    };
    if (this.timing.relistDurationMs > 0) setTimeout(finish, this.timing.relistDurationMs).unref();
    else finish();
  }

  /** podCache.GetNewerThan: at once if the cache is already newer than `after`, else when a relist that started after it ends. */
  newerThan(after: number): Promise<void> {
    if (this.timing.relistPeriodMs <= 0 || this.cacheTimestamp > after) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ startedAfter: after, resolve }));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    // Waiting syncs never resume: a stopped kubelet writes nothing more.
    this.waiters = [];
  }
}
