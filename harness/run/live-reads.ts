// Each terminating pod read live the moment a watch shows its deletion, a rollout's and a verification's
// alike: the pod as the API held it while it terminated, or, when the read found nothing (gone by then,
// failed, or not back by the end), the watch event's object that showed the deletion, marked source: 'watch'.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Cluster, readPod } from '../kube/index.ts';
import type { LiveRead } from '../observation/rollout.ts';
import type { HarnessTime } from '../observation/schema.ts';
import { apiTimeString, type RunClock } from './clock.ts';
import { liveContainers } from './rollout-watch.ts';

/** How long the end waits for live reads still under way. */
const READS_SETTLE_MS = 10_000;

/** A live read under way: its answer filled in when it comes; `seen`, the watch event's pod that set it off. */
interface PendingRead {
  pod: string;
  uid: string;
  after: string;
  seen: { at: HarnessTime; pod: k8s.V1Pod };
  result: LiveRead | null;
}

export class LiveReads {
  private readonly reads: PendingRead[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly run: { cluster: Cluster; namespace: string; clock: RunClock };

  /** `run`: where the pods are read, and the run's clock. */
  constructor(run: LiveReads['run']) {
    this.run = run;
  }

  /** Reads the pod once (by UID or name); `after`, the resourceVersion of the watch event `seen` that showed its deletion. */
  start(pod: string, uid: string, after: string, seen: PendingRead['seen']): void {
    if (this.reads.some((read) => read.uid === uid || read.pod === pod)) return;
    const pending: PendingRead = { pod, uid, after, seen, result: null };
    this.reads.push(pending);
    const { cluster, namespace, clock } = this.run;
    const read = readPod(cluster, namespace, pod).then(
      (live) => {
        pending.result = liveReadOf(pod, uid, after, clock.now(), live);
      },
      () => {
        /* the read failed: the watch's object stands in */
      },
    );
    this.pending.add(read);
    void read.finally(() => this.pending.delete(read));
  }

  /** The reads still under way get a little while to answer. */
  async settle(): Promise<void> {
    const settle = new AbortController();
    await Promise.race([
      Promise.allSettled([...this.pending]),
      sleep(READS_SETTLE_MS, undefined, { signal: settle.signal }).catch(() => {}),
    ]);
    settle.abort();
  }

  /** Every read in the order they began: the read's answer when it found the pod, else the watch's object. */
  settled(): LiveRead[] {
    return this.reads.map((r) =>
      r.result?.found
        ? r.result
        : { ...liveReadOf(r.pod, r.uid, r.after, r.seen.at, r.seen.pod), source: 'watch' as const },
    );
  }
}

/** The pod as the API held it while it terminated: found only when it is still the same pod (UID). */
function liveReadOf(pod: string, uid: string, after: string, at: HarnessTime, live: k8s.V1Pod | null): LiveRead {
  return {
    pod,
    at,
    after: { resourceVersion: after },
    found: live !== null && live.metadata?.uid === uid,
    uid: live?.metadata?.uid ?? null,
    resourceVersion: live?.metadata?.resourceVersion ?? null,
    deletionTimestamp: apiTimeString(live?.metadata?.deletionTimestamp),
    terminationGracePeriodSeconds: live?.spec?.terminationGracePeriodSeconds ?? null,
    templateHash: live?.metadata?.labels?.['pod-template-hash'] ?? null,
    containers: live ? liveContainers(JSON.parse(JSON.stringify(live.spec))) : [],
  };
}
