// Ground truth: what the sim's kubelet did and when (wall ms from its monotonic clock), so
// benchmarks can measure how well the harness reconstructs it from outside.
import { inform } from './controller-queue.ts';
import type { Store } from './store.ts';
import { wallNow } from './time.ts';

export interface TruthRecord {
  uid: string;
  name: string;
  namespace: string;
  deleteReceivedAt?: number;
  killingAt?: number;
  gracePeriodSeconds?: number;
  hookStartAt?: number;
  hookEndAt?: number;
  hookTimedOut?: boolean;
  hookElapsedSeconds?: number;
  stopGracePeriodSeconds?: number;
  termSentAt?: number;
  termSuppressed?: boolean;
  killSentAt?: number;
  exitedAt?: number;
  /** When the PLEG's relist saw the exit and the status was written. */
  exitSeenAt?: number;
  exitCode?: number;
  /** When the store took the pod in, the first status with a terminated container, the pod's removal (what a watch then shows). */
  createdAt?: number;
  exitPublishedAt?: number;
  goneAt?: number;
}

export class GroundTruth {
  private readonly records = new Map<string, TruthRecord>();

  for(pod: { metadata: { uid: string; name: string; namespace?: string } }): TruthRecord {
    let record = this.records.get(pod.metadata.uid);
    if (!record) {
      record = { uid: pod.metadata.uid, name: pod.metadata.name, namespace: pod.metadata.namespace ?? 'default' };
      this.records.set(pod.metadata.uid, record);
    }
    return record;
  }

  get(uid: string): TruthRecord | undefined {
    const record = this.records.get(uid);
    return record && { ...record };
  }

  all(): TruthRecord[] {
    return [...this.records.values()].map((r) => ({ ...r }));
  }
}

/** Records each pod's life as the store publishes it: created, its first container end written, gone. */
export function recordPublications(store: Store, truth: GroundTruth): () => void {
  return inform(store, 'pods', (e) => {
    const record = truth.for(e.object);
    const now = wallNow();
    if (e.type === 'ADDED') record.createdAt ??= now;
    if (e.type === 'DELETED') record.goneAt ??= now;
    if (record.exitPublishedAt === undefined && ((e.object.status?.containerStatuses ?? []) as { state?: { terminated?: unknown } }[]).some((c) => c.state?.terminated)) record.exitPublishedAt = now;
  });
}
