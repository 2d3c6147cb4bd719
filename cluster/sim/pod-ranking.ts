// Which pods a ReplicaSet deletes first when it scales down: controller.ActivePodsWithRanks.Less
// (pkg/controller/controller_utils.go, 1.34, with PodDeletionCost and LogarithmicScaleDown on, their defaults)
// and getPodsToDelete (pkg/controller/replicaset/replica_set.go).
import { isPodActive, isPodReady } from './controller-queue.ts';
import type { KubeObject } from './store.ts';

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

const deletionCost = (pod: KubeObject) => {
  const raw = pod.metadata.annotations?.[DELETION_COST];
  const n = raw === undefined ? 0 : Number(raw);
  return Number.isInteger(n) ? n : 0;
};
const readyTime = (pod: KubeObject): number => {
  const c = ((pod.status?.conditions ?? []) as any[]).find((x) => x.type === 'Ready' && x.status === 'True');
  return c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
};
const maxRestarts = (pod: KubeObject) =>
  Math.max(0, ...((pod.status?.containerStatuses ?? []) as any[]).map((c) => c.restartCount ?? 0));
const created = (pod: KubeObject) => (pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : 0);

/** logarithmicRankDiff: compares floor(log2(now - t)) in nanoseconds, as Go's time.Duration. */
function logRankDiff(t1: number, t2: number, now: number): number {
  const rank = (t: number) => {
    const d = (now - t) * 1e6;
    return d > 0 ? Math.floor(Math.log2(d)) : -1;
  };
  return rank(t1) - rank(t2);
}

/** afterOrZero: a zero time first, else the later one first. */
const afterOrZero = (t1: number, t2: number) => (t1 === 0 || t2 === 0 ? t1 === 0 : t1 > t2);

/** ActivePodsWithRanks.Less: true when pod a should be deleted before pod b. */
function deleteBefore(a: KubeObject, rankA: number, b: KubeObject, rankB: number, now: number): boolean {
  const nodeA = a.spec.nodeName ?? '',
    nodeB = b.spec.nodeName ?? '';
  // 1. Unassigned < assigned
  if (nodeA !== nodeB && (nodeA === '' || nodeB === '')) return nodeA === '';
  // 2. PodPending < PodUnknown < PodRunning
  const phaseA = PHASE_ORDINAL[a.status?.phase] ?? 0,
    phaseB = PHASE_ORDINAL[b.status?.phase] ?? 0;
  if (phaseA !== phaseB) return phaseA < phaseB;
  // 3. Not ready < ready
  if (isPodReady(a) !== isPodReady(b)) return !isPodReady(a);
  // 4. lower pod-deletion-cost < higher
  if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) < deletionCost(b);
  // 5. Doubled up < not doubled up
  if (rankA !== rankB) return rankA > rankB;
  // 6. Been ready for empty time < less time < more time (logarithmic buckets, then UID)
  if (isPodReady(a) && isPodReady(b)) {
    const ra = readyTime(a),
      rb = readyTime(b);
    if (ra !== rb) {
      if (ra === 0 || rb === 0) return afterOrZero(ra, rb);
      const diff = logRankDiff(ra, rb, now);
      if (diff === 0) return a.metadata.uid < b.metadata.uid;
      return diff < 0;
    }
  }
  // 7. Higher restart counts < lower
  if (maxRestarts(a) !== maxRestarts(b)) return maxRestarts(a) > maxRestarts(b);
  // 8. Empty creation time < newer < older (logarithmic buckets, then UID)
  const ca = created(a),
    cb = created(b);
  if (ca !== cb) {
    if (ca === 0 || cb === 0) return afterOrZero(ca, cb);
    const diff = logRankDiff(ca, cb, now);
    if (diff === 0) return a.metadata.uid < b.metadata.uid;
    return diff < 0;
  }
  return false;
}

/** getPodsToDelete: rank by co-located related pods, sort, take the first `diff`. */
export function getPodsToDelete(
  filteredPods: KubeObject[],
  relatedPods: KubeObject[],
  diff: number,
  now: number,
): KubeObject[] {
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  const onNode = new Map<string, number>();
  for (const pod of relatedPods)
    if (isPodActive(pod)) onNode.set(pod.spec.nodeName ?? '', (onNode.get(pod.spec.nodeName ?? '') ?? 0) + 1);
  const ranked = filteredPods.map((pod) => ({ pod, rank: onNode.get(pod.spec.nodeName ?? '') ?? 0 }));
  ranked.sort((x, y) =>
    deleteBefore(x.pod, x.rank, y.pod, y.rank, now) ? -1 : deleteBefore(y.pod, y.rank, x.pod, x.rank, now) ? 1 : 0,
  );
  return ranked.slice(0, diff).map((r) => r.pod);
}
