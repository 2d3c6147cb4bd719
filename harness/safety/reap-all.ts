// The class-wide reaper (`termlab reap --all-owners`): whoever the owner, it removes termlab's pods
// of one class environment whose activeDeadlineSeconds has passed, and rollouts' Deployments and
// Services of that environment whose termlab.io/expires-at has passed. It never guesses: a pod without
// this environment's label, or without a deadline, is not a candidate. Each candidate is read again
// just before its finalizer is removed and it is deleted; one failure never stops the rest; and
// nothing is counted deleted before the delete succeeded.
import type * as k8s from '@kubernetes/client-node';
import { listPods, type Cluster } from '../kube/index.ts';
import { secondsLeftOf } from './deadline.ts';
import {
  ENV_LABEL,
  environmentSelector,
  HOLD_FINALIZER,
  MANAGED_BY,
  MANAGER,
  OWNER_LABEL,
  RUN_LABEL,
} from './labels.ts';
import { type ReapAllEntry, takePod } from './reap-core.ts';
import { reapExpiredWorkloadsOfEnv } from './reap-workloads.ts';

export type { ReapAllEntry } from './reap-core.ts';

export interface ReapAllOptions {
  dryRun?: boolean;
  /** Called between the list and the deletions (tests use it to race the reaper). */
  afterList?: () => Promise<void>;
  now?: () => number;
}

/** Why this pod may not be taken, or null when it is this class's and its deadline has passed. */
function notExpired(pod: k8s.V1Pod, env: string, nowMs: number): string | null {
  const labels = pod.metadata?.labels ?? {};
  if (labels[MANAGED_BY] !== MANAGER || labels[ENV_LABEL] !== env) return `not a termlab pod of environment ${env}`;
  if (pod.metadata?.deletionTimestamp && !pod.metadata.finalizers?.includes(HOLD_FINALIZER))
    return 'already being deleted';
  const deadline = pod.spec?.activeDeadlineSeconds;
  if (deadline === undefined) return 'no activeDeadlineSeconds on the pod: never guessed at';
  const start = pod.status?.startTime ?? pod.metadata?.creationTimestamp;
  if (!start) return 'no start time on the pod: its deadline cannot be counted';
  const left = secondsLeftOf(deadline, new Date(start).getTime(), nowMs);
  return left > 0 ? `its deadline is in ${Math.ceil(left)}s` : null;
}

export async function reapAllOwners(
  cluster: Cluster,
  namespace: string,
  env: string,
  options: ReapAllOptions = {},
): Promise<ReapAllEntry[]> {
  const now = options.now ?? Date.now;
  // Rollouts' Deployments and Services first: a Deployment left would only make its pods again.
  const entries: ReapAllEntry[] = await reapExpiredWorkloadsOfEnv(cluster, namespace, env, {
    dryRun: options.dryRun,
    now,
  });
  const listed = await listPods(cluster, namespace, { labelSelector: environmentSelector(env) });
  const candidates: k8s.V1Pod[] = [];
  for (const pod of listed.items) {
    const labels = pod.metadata?.labels ?? {};
    const why = notExpired(pod, env, now());
    // The selector already asked for this env; a pod that still does not match is left unreported.
    if (why?.startsWith('not a termlab pod')) continue;
    if (why)
      entries.push({
        pod: pod.metadata!.name!,
        owner: labels[OWNER_LABEL] ?? null,
        run: labels[RUN_LABEL] ?? null,
        result: 'skipped',
        why,
      });
    else candidates.push(pod);
  }
  await options.afterList?.();

  for (const pod of candidates) {
    const labels = pod.metadata?.labels ?? {};
    const stillWanted = (current: k8s.V1Pod) => {
      const why = notExpired(current, env, now());
      return why && `changed since the list: ${why}`;
    };
    const taken = await takePod(cluster, namespace, pod, {
      dryRun: options.dryRun,
      stillWanted,
      why: 'its deadline has passed',
    });
    entries.push({
      pod: pod.metadata!.name!,
      owner: labels[OWNER_LABEL] ?? null,
      run: labels[RUN_LABEL] ?? null,
      ...taken,
    });
  }
  return entries;
}

export function countReapAll(entries: ReapAllEntry[]): Record<ReapAllEntry['result'], number> {
  const count = (r: ReapAllEntry['result']) => entries.filter((e) => e.result === r).length;
  return {
    deleted: count('deleted'),
    'would delete': count('would delete'),
    skipped: count('skipped'),
    failed: count('failed'),
  };
}

/** One line per pod, then the counts on one line a CronJob's log can be searched for. */
export function formatReapAll(entries: ReapAllEntry[], namespace: string, env: string): string {
  const lines = entries.map(
    (e) => `${e.result.padEnd(12)} ${e.pod} (owner ${e.owner ?? '?'}, ${e.run ?? 'no run'}): ${e.why}`,
  );
  const c = countReapAll(entries);
  lines.push(
    `reap --all-owners namespace=${namespace} env=${env}: ${c.deleted} deleted, ${c['would delete']} would be deleted, ${c.skipped} skipped, ${c.failed} failed`,
  );
  return lines.join('\n') + '\n';
}
