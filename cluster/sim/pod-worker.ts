// The kubelet's pod worker (pkg/kubelet/pod_workers.go podWorkerLoop, 1.34.4 and 1.37.2), reduced to its timing:
// one loop per pod runs one update at a time, and before each waits in
// podCache.GetNewerThan(uid, lastSyncTime) for the cache to be newer than the end of its previous
// sync. An update that arrives meanwhile becomes the one pending update; a termination supersedes a
// pending sync, and a sync in flight is cancelled ("Cancelling current pod sync") but still waits
// for its relist and runs, so a DELETE that finds one waits for two relists (the real node's log
// at --v=4 shows exactly this). From 1.36 SyncPod may hand back a postSync, run after lastSyncTime is
// set (1.37.2 pod_workers.go:1322-1325): the kubelet's on-demand relist of the pod.
import type { InitProgress } from './init-containers.ts';
import type { RuntimePod } from './kuberuntime.ts';
import type { Pleg } from './pleg.ts';
import type { ReadinessProber } from './prober.ts';
import type { PodSpec } from './pod-types.ts';
import type { KubeObject } from './store.ts';
import { wallNow } from './time.ts';

/**
 * podSyncStatus, as one stage that only moves on (pod_workers.go keeps it as flags and times).
 * created: the first sync made the sandbox and containers; startSeen: the PLEG saw them start; running: that
 * status is written; killing: killPod began, so exits are read from its return; finished: every exit is
 * written; terminated: the final delete is issued.
 */
const STAGES = ['admitted', 'created', 'startSeen', 'running', 'killing', 'finished', 'terminated'] as const;
export type PodStage = (typeof STAGES)[number];

/** One pod on this node: its runtime side, its sync loop and what the kubelet keeps for it. */
export interface PodWorker extends RuntimePod {
  stage: PodStage;
  loop: PodWorkerLoop;
  probers: ReadinessProber[];
  /** Its native sidecars' start, one per sync (init-containers.ts). */
  init: InitProgress;
  /** The main container whose times the pod's truth record keeps: spec.containers[0], the lab's. */
  leadContainer: string;
  /** status.startTime plus activeDeadlineSeconds, wall ms. */
  deadlineAt?: number;
  /** An eviction (the active deadline) decided the pod's terminal reason; the phase waits for the containers to stop. */
  evicted?: { reason: string; message: string };
  /** The kubelet has seen the pod's deletionTimestamp (podSyncStatus.deleted). */
  deleted?: boolean;
}

export const reached = (worker: PodWorker, stage: PodStage) => STAGES.indexOf(worker.stage) >= STAGES.indexOf(stage);
export const advance = (worker: PodWorker, stage: PodStage) => {
  if (!reached(worker, stage)) worker.stage = stage;
};

/** calculateEffectiveGracePeriod: the deletion's grace, else the spec's; never below 1 s. */
export function calculateEffectiveGracePeriod(pod: KubeObject): number {
  const grace = pod.metadata.deletionGracePeriodSeconds ?? (pod.spec as PodSpec).terminationGracePeriodSeconds ?? 30;
  return Math.max(1, grace);
}

/** SyncPod, SyncTerminatingPod, SyncTerminatedPod. */
export type WorkType = 'sync' | 'terminating' | 'terminated';
const STAGE: Record<WorkType, number> = { sync: 0, terminating: 1, terminated: 2 };

/** Runs one update; returns the work the pod moves on to, if any ("Pod is terminal", "terminated all containers"). */
export type SyncHandler = (work: WorkType) => Promise<WorkType | undefined> | WorkType | undefined;

export class PodWorkerLoop {
  private readonly pleg: Pleg;
  private readonly handle: SyncHandler;
  private readonly uid: string;
  private lastSyncTime = Number.NEGATIVE_INFINITY;
  private postSyncs: (() => void)[] = [];
  private pending: WorkType | null = null;
  private stage: WorkType = 'sync';
  private running = false;
  private stopped = false;

  constructor(uid: string, pleg: Pleg, handle: SyncHandler) {
    this.uid = uid;
    this.pleg = pleg;
    this.handle = handle;
  }

  /** UpdatePod: work of an earlier stage than the pod has reached is dropped. */
  update(work: WorkType): void {
    if (this.stopped || STAGE[work] < STAGE[this.stage]) return;
    this.stage = work;
    if (!this.pending || STAGE[work] >= STAGE[this.pending]) this.pending = work;
    if (!this.running) void this.loop();
  }

  /** SyncPod's postSync: called during a sync, run once that sync's lastSyncTime is set. */
  postSync(run: () => void): void {
    this.postSyncs.push(run);
  }

  get terminationRequested(): boolean {
    return STAGE[this.stage] >= STAGE.terminating;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.pending && !this.stopped) {
        const work = this.pending;
        this.pending = null;
        await this.pleg.newerThan(this.lastSyncTime, this.uid);
        if (this.stopped) break;
        const next = await this.handle(work);
        this.lastSyncTime = wallNow();
        const postSyncs = this.postSyncs;
        this.postSyncs = [];
        for (const run of postSyncs) run();
        if (next) this.update(next);
      }
    } catch (error) {
      // A sync that fails once the kubelet has stopped (its runtime gone) is the shutdown's, not the pod's.
      if (!this.stopped) throw error;
    } finally {
      // In the same tick as the loop's last check: work queued after it starts a new loop.
      this.running = false;
    }
  }

  stop(): void {
    this.stopped = true;
  }
}
