// The class's witness records read from the cluster (the instructor's kubeconfig): one ConfigMap per pod in
// the class's witness namespace, as server/witness.ts writes them. Handed on as the export's plain records:
// the grader never reads a cluster (harness/grade/witness.ts).
import { TermlabError } from '../../lib/errors.ts';
import { formatIssue } from '../../lib/files.ts';
import { WITNESS_DATA_KEY, WITNESS_RECORD_LABEL, witnessNamespaceOf } from '../../server/contract.ts';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { classify, connect, timeoutOptions, withRetry } from '../kube/index.ts';
import {
  WITNESS_EXPORT_KIND,
  WITNESS_EXPORT_VERSION,
  type WitnessExport,
  WitnessRecordSchema,
} from '../observation/witness.ts';

export interface WitnessSource {
  kubeconfig?: string;
  context?: string;
  /** The class's namespace (manifests/class.yaml): the records are in CLASS-witness. */
  classNamespace: string;
  signal?: AbortSignal;
}

export async function readWitnessFromCluster(source: WitnessSource): Promise<WitnessExport> {
  const cluster = await connect({ kubeconfig: source.kubeconfig, context: source.context });
  const namespace = witnessNamespaceOf(source.classNamespace);
  let items: V1ConfigMap[];
  try {
    items = (
      await withRetry(
        cluster,
        `list the witness's records in ${namespace}`,
        () =>
          cluster.core.listNamespacedConfigMap(
            { namespace, labelSelector: `${WITNESS_RECORD_LABEL}=pod` },
            timeoutOptions(cluster.health.requestTimeoutMs),
          ),
        { signal: source.signal },
      )
    ).items;
  } catch (error) {
    const status = classify(error).status;
    if (status === 404)
      throw new TermlabError(
        'CLASS_NOT_READY',
        `namespace ${namespace} does not exist: the class's witness is not set up (apply manifests/class.yaml), or name the class with --namespace`,
        { namespace },
      );
    if (status === 403)
      throw new TermlabError(
        'API_REJECTED',
        `the cluster refuses to list ConfigMaps in ${namespace} to this kubeconfig's user: grade with the instructor's kubeconfig`,
        { namespace },
      );
    throw error;
  }
  const records = items.map((cm) => {
    const where = `ConfigMap ${namespace}/${cm.metadata?.name}`;
    let json: unknown;
    try {
      json = JSON.parse(cm.data?.[WITNESS_DATA_KEY] ?? '');
    } catch {
      throw new TermlabError('WITNESS_INVALID', `${where}: data.${WITNESS_DATA_KEY} is not JSON`, { namespace });
    }
    const parsed = WitnessRecordSchema.safeParse(json);
    if (!parsed.success)
      throw new TermlabError('WITNESS_INVALID', `${where}: ${formatIssue(parsed.error.issues[0]!, '(record)')}`, {
        namespace,
      });
    return { ...parsed.data, recordVersion: cm.metadata?.resourceVersion ?? '' };
  });
  records.sort((a, b) => (a.firstSeenAt + a.uid).localeCompare(b.firstSeenAt + b.uid));
  return {
    kind: WITNESS_EXPORT_KIND,
    version: WITNESS_EXPORT_VERSION,
    cluster: { context: cluster.context, server: cluster.server },
    namespace,
    exportedAt: new Date().toISOString(),
    records,
  };
}
