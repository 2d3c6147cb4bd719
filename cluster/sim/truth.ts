// Ground truth: what the sim's kubelet did and when (wall ms from its monotonic clock), so
// benchmarks can measure how well the harness reconstructs it from outside.
import { inform } from './controller-queue.ts';
import type { Store } from './store.ts';
import { wallNow } from './time.ts';

/** One container's start and kill sequence (kill.ts, termination-order.ts). */
export interface ContainerTruth {
  /** Its process started; the PLEG saw it running; its startupProbe first succeeded. */
  startedAt?: number;
  startSeenAt?: number;
  startupSucceededAt?: number;
  killingAt?: number;
  hookStartAt?: number;
  hookEndAt?: number;
  hookTimedOut?: boolean;
  hookElapsedSeconds?: number;
  /** waitForTurn's seconds (a float, as it returns them), when the pod has a sidecar order. */
  turnWaitSeconds?: number;
  stopGracePeriodSeconds?: number;
  termSentAt?: number;
  /** The stop signal sent at termSentAt (SIGTERM unless lifecycle.stopSignal, with its gate on, or the image says otherwise). */
  stopSignal?: string;
  termSuppressed?: boolean;
  killSentAt?: number;
  /** The memory limit's SIGKILL (memory.ts), the kernel's and not the kubelet's. */
  oomKilledAt?: number;
  exitedAt?: number;
  exitCode?: number;
}

/**
 * A pod's record. Its kill fields are the first main container's (spec.containers[0], the lab's), as
 * they were before pods had more than one; `containers` has every container's own, by name.
 */
export interface TruthRecord extends ContainerTruth {
  uid: string;
  name: string;
  namespace: string;
  deleteReceivedAt?: number;
  gracePeriodSeconds?: number;
  /** By container name (a null-prototype object: the names came from a pod spec). */
  containers?: Record<string, ContainerTruth>;
  /** When the PLEG's relist saw the exit and the status was written. */
  exitSeenAt?: number;
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

  /** One container's record in its pod's, made on first use. */
  container(pod: { metadata: { uid: string; name: string; namespace?: string } }, name: string): ContainerTruth {
    const record = this.for(pod);
    record.containers ??= Object.create(null) as Record<string, ContainerTruth>;
    return (record.containers[name] ??= {});
  }

  get(uid: string): TruthRecord | undefined {
    const record = this.records.get(uid);
    return record && copy(record);
  }

  all(): TruthRecord[] {
    return [...this.records.values()].map(copy);
  }
}

function copy(record: TruthRecord): TruthRecord {
  if (!record.containers) return { ...record };
  const containers = Object.create(null) as Record<string, ContainerTruth>;
  for (const [name, c] of Object.entries(record.containers)) containers[name] = { ...c };
  return { ...record, containers };
}

/** Records each pod's life as the store publishes it: created, its first container end written, gone. */
export function recordPublications(store: Store, truth: GroundTruth): () => void {
  return inform(store, 'pods', (e) => {
    const record = truth.for(e.object);
    const now = wallNow();
    if (e.type === 'ADDED') record.createdAt ??= now;
    if (e.type === 'DELETED') record.goneAt ??= now;
    if (
      record.exitPublishedAt === undefined &&
      ((e.object.status?.containerStatuses ?? []) as { state?: { terminated?: unknown } }[]).some(
        (c) => c.state?.terminated,
      )
    )
      record.exitPublishedAt = now;
  });
}
