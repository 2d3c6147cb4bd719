// --max-pods: count this owner's live lab pods before creating more.
import { TermlabError } from '../../lib/errors.ts';
import { listPods, type Cluster } from '../kube/index.ts';
import { ownerSelector } from './labels.ts';

async function countLivePods(cluster: Cluster, namespace: string, owner: string): Promise<number> {
  const list = await listPods(cluster, namespace, { labelSelector: ownerSelector(owner) });
  return list.items.filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? '')).length;
}

export async function checkPodCap(
  cluster: Cluster,
  namespace: string,
  owner: string,
  wanted: number,
  maxPods: number,
): Promise<void> {
  const live = await countLivePods(cluster, namespace, owner);
  if (live + wanted > maxPods) {
    throw new TermlabError(
      'POD_CAP_REACHED',
      `owner ${owner} already has ${live} live lab pod(s) in ${namespace}; ${wanted} more would pass --max-pods ${maxPods}. Run \`termlab reap\` for leftovers, or lower --parallel.`,
      { live, wanted, maxPods },
    );
  }
}
