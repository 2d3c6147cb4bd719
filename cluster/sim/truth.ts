// Ground truth: what the sim's kubelet did and when (wall ms from its monotonic clock), so
// benchmarks can measure how well the harness reconstructs it from outside.
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
