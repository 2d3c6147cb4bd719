// The end of a run: its own pods that a scenario's cleaner could not finish (the API was away)
// are released and deleted now, and the run is finished only once none is left.
import { setTimeout as sleep } from 'node:timers/promises';
import { deletePod, listPods, removeFinalizer, type Cluster } from '../kube/index.ts';
import { HOLD_FINALIZER, RUN_LABEL } from './labels.ts';
import { sweepRunWorkloads } from './reap-workloads.ts';

/** How long a run waits at its end for its pods to be gone, and how often it looks. */
const RUN_PODS_GONE_TIMEOUT_MS = 15_000;
const RUN_PODS_POLL_MS = 250;

/** Names of this run's pods that still exist. API failures come out as TermlabErrors (exit 3). */
async function runPodsLeft(cluster: Cluster, namespace: string, runId: string): Promise<string[]> {
  const list = await listPods(cluster, namespace, { labelSelector: `${RUN_LABEL}=${runId}` });
  return list.items.map((p) => p.metadata!.name!);
}

/**
 * Releases and deletes what is left of this run, then waits for it to be gone; true when it is.
 * `workloads`: the run made Deployments and Services (rollouts), which go first. Every pod is swept
 * whatever else fails; the first failure is thrown after that, before the wait.
 */
export async function sweepRun(
  cluster: Cluster,
  namespace: string,
  runId: string,
  options: { workloads?: boolean; timeoutMs?: number } = {},
): Promise<boolean> {
  const until = performance.now() + (options.timeoutMs ?? RUN_PODS_GONE_TIMEOUT_MS);
  const failures: unknown[] = [];
  // A Deployment left behind would only make its pods again.
  if (options.workloads)
    await sweepRunWorkloads(cluster, namespace, runId).catch((error: unknown) => failures.push(error));
  const list = await listPods(cluster, namespace, { labelSelector: `${RUN_LABEL}=${runId}` });
  for (const pod of list.items) {
    const name = pod.metadata!.name!;
    try {
      if (pod.metadata?.finalizers?.includes(HOLD_FINALIZER))
        await removeFinalizer(cluster, namespace, name, HOLD_FINALIZER);
      if (!pod.metadata?.deletionTimestamp) await deletePod(cluster, namespace, name, pod.metadata!.uid!);
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length) throw failures[0];
  for (;;) {
    if ((await runPodsLeft(cluster, namespace, runId)).length === 0) return true;
    if (performance.now() > until) return false;
    await sleep(RUN_PODS_POLL_MS);
  }
}
