// Removes this owner's pods of runs that are no longer alive. Rules learned the hard way:
// only pods whose owner label is ours are candidates ("not in my records" is never a reason),
// each is read again just before deletion, and one failure never stops the rest.
import type * as k8s from '@kubernetes/client-node';
import { listPods, type Cluster } from '../kube/index.ts';
import { secondsLeftOf } from './deadline.ts';
import { HOLD_FINALIZER, MANAGED_BY, MANAGER, OWNER_LABEL, RUN_LABEL } from './labels.ts';
import { type ReapEntry, takePod } from './reap-core.ts';
import { reapWorkloads } from './reap-workloads.ts';
import { listRuns, liveness, readRun, saveRun } from './runs.ts';

export type { ReapEntry } from './reap-core.ts';

export interface ReapReport {
  entries: ReapEntry[];
  notMine: { pod: string; owner: string | null }[];
}

export interface ReapOptions {
  dryRun?: boolean;
  /** Called between the list and the deletions (tests use it to race the reaper). */
  afterList?: () => Promise<void>;
  /** Runs never to touch: the caller's own. */
  exceptRun?: string;
  now?: () => number;
}

function startedAt(pod: k8s.V1Pod, nowMs: number): number {
  const start = pod.status?.startTime ?? pod.metadata?.creationTimestamp;
  return start ? new Date(start).getTime() : nowMs;
}

async function candidacy(pod: k8s.V1Pod, options: ReapOptions): Promise<{ take: boolean; why: string }> {
  const run = pod.metadata?.labels?.[RUN_LABEL] ?? null;
  if (run && run === options.exceptRun) return { take: false, why: 'belongs to this run' };
  const record = run ? await readRun(run) : null;
  if (record) {
    const { alive, why } = liveness(record);
    return { take: !alive, why };
  }
  // No local record (another machine, or a lost state file): only the pod's own deadline decides.
  const deadline = pod.spec?.activeDeadlineSeconds;
  if (deadline === undefined)
    return { take: false, why: `no record of run ${run ?? '?'} here and no deadline on the pod` };
  const nowMs = (options.now ?? Date.now)();
  const left = secondsLeftOf(deadline, startedAt(pod, nowMs), nowMs);
  return left > 0
    ? { take: false, why: `no record of run ${run ?? '?'} here; its deadline is in ${Math.ceil(left)}s` }
    : { take: true, why: `run ${run ?? '?'} is unknown here and the pod's deadline has passed` };
}

export async function reap(
  cluster: Cluster,
  namespace: string,
  owner: string,
  options: ReapOptions = {},
): Promise<ReapReport> {
  // A rollout's Deployment and Service first, by the same rules: a Deployment left would make its pods again.
  const workloads = await reapWorkloads(cluster, namespace, owner, options);
  const listed = await listPods(cluster, namespace);
  const report: ReapReport = { entries: [], notMine: [] };
  const candidates: { pod: k8s.V1Pod; why: string }[] = [];
  for (const pod of listed.items) {
    const labels = pod.metadata?.labels ?? {};
    const name = pod.metadata!.name!;
    if (labels[MANAGED_BY] !== MANAGER || labels[OWNER_LABEL] !== owner) {
      report.notMine.push({ pod: name, owner: labels[OWNER_LABEL] ?? null });
      continue;
    }
    if (pod.metadata?.deletionTimestamp && !pod.metadata.finalizers?.includes(HOLD_FINALIZER)) {
      report.entries.push({
        pod: name,
        run: labels[RUN_LABEL] ?? null,
        result: 'skipped',
        why: 'already being deleted',
      });
      continue;
    }
    const { take, why } = await candidacy(pod, options);
    if (take) candidates.push({ pod, why });
    else report.entries.push({ pod: name, run: labels[RUN_LABEL] ?? null, result: 'skipped', why });
  }
  await options.afterList?.();

  for (const { pod, why } of candidates) {
    const run = pod.metadata?.labels?.[RUN_LABEL] ?? null;
    const stillWanted = (now: k8s.V1Pod) => {
      const labels = now.metadata?.labels ?? {};
      return labels[OWNER_LABEL] !== owner || labels[RUN_LABEL] !== run
        ? 'its owner or run changed since the list'
        : null;
    };
    report.entries.push({
      pod: pod.metadata!.name!,
      run,
      ...(await takePod(cluster, namespace, pod, { dryRun: options.dryRun, stillWanted, why })),
    });
  }
  report.entries.push(...workloads);
  if (!options.dryRun) await markDeadRuns(cluster, namespace, owner);
  return report;
}

/** A run recorded as running whose process is gone and whose pods are gone is marked failed. */
async function markDeadRuns(cluster: Cluster, namespace: string, owner: string): Promise<void> {
  for (const record of await listRuns()) {
    if (
      record.owner !== owner ||
      record.namespace !== namespace ||
      record.status !== 'running' ||
      liveness(record).alive
    )
      continue;
    const left = await listPods(cluster, namespace, { labelSelector: `${RUN_LABEL}=${record.runId}` });
    if (left.items.length === 0)
      await saveRun({ ...record, status: 'failed', note: 'its process ended before it finished; its pods are gone' });
  }
}

export function formatReap(report: ReapReport): string {
  const lines = report.entries.map((e) => `${e.result.padEnd(12)} ${e.pod}${e.run ? ` (${e.run})` : ''}: ${e.why}`);
  if (report.notMine.length) {
    const owners = [...new Set(report.notMine.map((n) => n.owner ?? 'unlabelled'))];
    lines.push(`not mine     ${report.notMine.length} pod(s), left alone (owners: ${owners.join(', ')})`);
  }
  const count = (r: ReapEntry['result']) => report.entries.filter((e) => e.result === r).length;
  lines.push(
    `${count('deleted')} deleted, ${count('would delete')} would be deleted, ${count('skipped')} skipped, ${count('failed')} failed`,
  );
  return lines.join('\n') + '\n';
}
