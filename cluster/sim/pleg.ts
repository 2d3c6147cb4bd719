// The kubelet's reaction time, by its mechanism (read from the 1.34.4 and 1.37.2 sources):
// - pkg/kubelet/pleg/generic.go: the generic PLEG relists the runtime every genericPlegRelistPeriod
//   (1 s, kubelet.go) after the previous relist ended (1.34: wait.Until; 1.37: workerLoopIteration resets
//   globalRelistTimer after Relist returns, generic.go:206,217), and only at the end of a relist moves the pod
//   cache's timestamp on (cache.UpdateTime(timestamp), generic.go:325), to the relist's start.
// - pkg/kubelet/pod_workers.go podWorkerLoop: every sync first waits for
//   podCache.GetNewerThan(uid, lastSyncTime), a cache entry newer than the worker's previous sync
//   ("TODO: this adds ~1s of latency on all transitions from sync to terminating to terminated", 1.37.2 :1281).
// - From 1.36 (PLEGOnDemandRelist), a SyncPod that did something in the runtime asks for a relist of that one
//   pod (kubelet.go:2321-2326 postSync → RequestPodRelist), run by the same PLEG loop when no global relist is
//   due (generic.go:218-221; skipped if a global relist started after the request). It sets the pod's own
//   observed time (generic.go:443 SetObservedTime, to the listing's start, kuberuntime_manager.go:491), which
//   GetNewerThan now also accepts (container/cache.go:191), and delivers that pod's PLEG events at once.
// pod-worker.ts keeps each pod's lastSyncTime and waits here; this file is the relist and the cache's clocks.
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

/** Measured on the real node (docs/simulated-cluster.md, "The kubelet's reaction time"); killPodReturnMs re-measured on v1.37.2. */
export const REAL_NODE_TIMING: KubeletTiming = {
  relistPeriodMs: 1000,
  relistDurationMs: 4,
  syncTickMs: 1000,
  runtime: { runPodSandboxMs: 190, startContainerMs: 90, killPodReturnMs: 330 },
};

interface Waiter {
  uid: string;
  startedAfter: number;
  resolve: () => void;
}

export class Pleg {
  private readonly timing: KubeletTiming;
  private waiters: Waiter[] = [];
  /** cache.UpdateTime's timestamp: when the last completed relist started. */
  private cacheTimestamp = Number.NEGATIVE_INFINITY;
  /** getRelistTime(): when the last global relist started (set as it starts, generic.go updateRelistTime). */
  private relistStartedAt = Number.NEGATIVE_INFINITY;
  /** Each pod's observedTime from an on-demand relist of it alone (cache.go SetObservedTime). */
  private readonly observed = new Map<string, number>();
  /** The relist requests queued (relistRequests), served one at a time between global relists. */
  private requests: { uid: string; at: number }[] = [];
  private relisting = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A stopped kubelet (faults.ts KubeletPause): a relist due meanwhile runs when it continues. */
  private readonly gate: { paused: boolean; whenRunning(act: () => void): void } | undefined;

  constructor(timing: KubeletTiming, gate?: { paused: boolean; whenRunning(act: () => void): void }) {
    this.timing = timing;
    this.gate = gate;
    // The first relist at once: 1.34's wait.Until calls it before its first wait, 1.37 arms
    // globalRelistTimer with 0 (generic.go Start, "trigger the first relist immediately").
    if (timing.relistPeriodMs > 0) this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.relist(), delayMs);
    this.timer.unref();
  }

  /** Wakes the waiters (of one pod, or of all) that a listing started at `startedAt` satisfies. */
  private wake(startedAt: number, uid?: string): void {
    const ready = (w: Waiter) => w.startedAfter < startedAt && (uid === undefined || w.uid === uid);
    const woken = this.waiters.filter(ready);
    this.waiters = this.waiters.filter((w) => !ready(w));
    for (const w of woken) w.resolve();
  }

  private relist(): void {
    if (this.stopped) return;
    if (this.gate?.paused) return this.gate.whenRunning(() => this.relist());
    this.relisting = true;
    const startedAt = wallNow();
    this.relistStartedAt = startedAt;
    const finish = () => {
      // cache.UpdateTime(startedAt): wakes every GetNewerThan older than this relist's start.
      this.cacheTimestamp = startedAt;
      this.wake(startedAt);
      this.relisting = false;
      this.schedule(this.timing.relistPeriodMs);
      this.serveRequests();
    };
    if (this.timing.relistDurationMs > 0) setTimeout(finish, this.timing.relistDurationMs).unref();
    else finish();
  }

  /** RequestRelist (PLEGOnDemandRelist): relist this one pod as soon as the PLEG loop is free. */
  requestRelist(uid: string): void {
    if (this.stopped || this.timing.relistPeriodMs <= 0) return;
    this.requests.push({ uid, at: wallNow() });
    this.serveRequests();
  }

  private serveRequests(): void {
    if (this.relisting || this.stopped || this.gate?.paused) return;
    const request = this.requests.shift();
    if (!request) return;
    // generic.go:219: a request a global relist has served since it was made is dropped.
    if (!(request.at > this.relistStartedAt)) return this.serveRequests();
    this.relisting = true;
    const startedAt = wallNow();
    const finish = () => {
      if (this.stopped) return;
      this.observed.set(request.uid, startedAt);
      this.wake(startedAt, request.uid);
      this.relisting = false;
      this.serveRequests();
    };
    // relistPod lists one pod: no longer than a global relist.
    if (this.timing.relistDurationMs > 0) setTimeout(finish, this.timing.relistDurationMs).unref();
    else finish();
  }

  /**
   * podCache.GetNewerThan(uid, after), and the PLEG events of a pod: at once if the cache (or this pod's own
   * observed time) is already newer than `after`, else when a relist that started after it ends.
   */
  newerThan(after: number, uid: string): Promise<void> {
    if (
      this.timing.relistPeriodMs <= 0 ||
      this.cacheTimestamp > after ||
      (this.observed.get(uid) ?? Number.NEGATIVE_INFINITY) > after
    )
      return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ uid, startedAfter: after, resolve }));
  }

  /** cache.Delete: the pod's entry goes with the pod. */
  forget(uid: string): void {
    this.observed.delete(uid);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    // Waiting syncs never resume: a stopped kubelet writes nothing more.
    this.waiters = [];
    this.requests = [];
  }
}
