// `reap --all-owners --class NAME`: the class-wide reaper over every namespace of a class (the class's
// own and each student's, all labelled termlab.io/class=NAME by manifests/class.yaml and `termlab class
// student`). One namespace's failure (its RoleBinding gone, say) is reported and never stops the rest.
import { apiErrorText, listObjects, type Cluster } from '../kube/index.ts';
import { countReapAll, formatReapAll, reapAllOwners, type ReapAllEntry } from './reap-all.ts';

export const CLASS_LABEL = 'termlab.io/class';

export interface ClassReap {
  namespaces: { namespace: string; entries: ReapAllEntry[]; error: string | null }[];
}

export async function reapClass(
  cluster: Cluster,
  className: string,
  env: string,
  options: { dryRun?: boolean; signal?: AbortSignal; now?: () => number } = {},
): Promise<ClassReap> {
  const listed = await listObjects(cluster, '/api/v1/namespaces', `${CLASS_LABEL}=${className}`, {
    signal: options.signal,
  });
  const namespaces: ClassReap['namespaces'] = [];
  for (const { name } of listed.sort((a, b) => a.name.localeCompare(b.name))) {
    try {
      namespaces.push({
        namespace: name,
        entries: await reapAllOwners(cluster, name, env, { dryRun: options.dryRun, now: options.now }),
        error: null,
      });
    } catch (error) {
      namespaces.push({ namespace: name, entries: [], error: apiErrorText(error) });
    }
  }
  return { namespaces };
}

export function formatReapClass(report: ClassReap, className: string, env: string): string {
  const total = { deleted: 0, 'would delete': 0, skipped: 0, failed: 0 };
  let text = '';
  for (const n of report.namespaces) {
    if (n.error) {
      text += `failed       namespace ${n.namespace}: ${n.error}\n`;
      total.failed++;
      continue;
    }
    text += formatReapAll(n.entries, n.namespace, env);
    const c = countReapAll(n.entries);
    for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += c[key];
  }
  return `${text}reap --all-owners class=${className} (${report.namespaces.length} namespace(s)) env=${env}: ${total.deleted} deleted, ${total['would delete']} would be deleted, ${total.skipped} skipped, ${total.failed} failed\n`;
}
