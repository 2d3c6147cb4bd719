// `--apply FILE` with --sim: the simulated cluster starts empty, so the team's own objects (their
// Deployment, its Service) are created on it first, as `kubectl create -f FILE` would, and the
// Deployment is waited for until it is at rest: then verify reads it as it reads one on any cluster.
// Only ever on the simulated cluster this run started (on a real one verify changes only the named
// Deployment, and only as its plan says).
import { readFile } from 'node:fs/promises';
import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { isTermlabError, TermlabError } from '../../lib/errors.ts';
import { formatIssue } from '../../lib/files.ts';
import { COLLECTIONS, type Cluster, WatchStream, withRetry } from '../kube/index.ts';
import { parseYamlDocuments } from '../../lib/yaml-text.ts';

const MAX_MANIFEST_BYTES = 1024 * 1024;

const ManifestSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }),
});

export interface Manifest {
  kind: string;
  name: string;
  /** Its namespace once placed (the file's, else --namespace's); null for a Namespace. */
  namespace: string | null;
  /** Where it starts in the file, for errors. */
  where: string;
  body: k8s.KubernetesObject & Record<string, unknown>;
}

/** The file's objects, each checked for kind and name; the one Deployment to verify must be among them. */
export async function readManifests(path: string, namespace: string, deployment: string): Promise<Manifest[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TermlabError('INPUT_UNREADABLE', `--apply ${path}: cannot read: ${(error as Error).message}`, {
      source: path,
    });
  }
  if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES)
    throw new TermlabError('INPUT_TOO_LARGE', `--apply ${path}: larger than ${MAX_MANIFEST_BYTES} bytes`, {
      source: path,
    });
  const manifests = parseYamlDocuments(text, `--apply ${path}`, 'USAGE').map(({ data, line }, i) => {
    const where = `--apply ${path}: document ${i + 1} (line ${line})`;
    const parsed = ManifestSchema.safeParse(data);
    if (!parsed.success)
      throw new TermlabError('USAGE', `${where}: ${formatIssue(parsed.error.issues[0]!)}`, { source: path });
    const body = structuredClone(parsed.data) as Manifest['body'];
    const namespaced = parsed.data.kind !== 'Namespace';
    if (namespaced) body.metadata = { ...body.metadata, namespace: parsed.data.metadata.namespace ?? namespace };
    return {
      kind: parsed.data.kind,
      name: parsed.data.metadata.name,
      namespace: namespaced ? body.metadata!.namespace! : null,
      where,
      body,
    };
  });
  if (!manifests.some((m) => m.kind === 'Deployment' && m.name === deployment && m.namespace === namespace)) {
    const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => `${m.namespace}/${m.name}`);
    throw new TermlabError(
      'USAGE',
      `--apply ${path}: no Deployment ${deployment} in namespace ${namespace} to verify (the file has ${deployments.length ? deployments.join(', ') : 'no Deployment'})`,
      { source: path },
    );
  }
  return manifests;
}

/**
 * Creates each object in the file's order (the namespaces they name first, when the simulated
 * cluster lacks them); an object the cluster refuses is named with its answer (exit 2).
 * Returns the resourceVersion the Deployment was created at, where its wait starts.
 */
export async function createManifests(cluster: Cluster, manifests: Manifest[], deployment: string): Promise<string> {
  const client = k8s.KubernetesObjectApi.makeApiClient(cluster.kc);
  const create = async (m: Pick<Manifest, 'where' | 'kind' | 'name' | 'body'>) => {
    try {
      return await withRetry(cluster, `create ${m.kind} ${m.name}`, () => client.create(m.body));
    } catch (error) {
      if (isTermlabError(error) && error.code === 'API_REJECTED')
        throw new TermlabError(
          'USAGE',
          `${m.where}: the simulated cluster refused ${m.kind} ${m.name}: ${error.message.replace(/^create [^:]+: /, '')}`,
          error.context,
          { cause: error },
        );
      throw error;
    }
  };
  const declared = new Set(manifests.filter((m) => m.kind === 'Namespace').map((m) => m.name));
  const existing = new Set(
    (await withRetry(cluster, 'list namespaces', () => cluster.core.listNamespace())).items.map(
      (n) => n.metadata?.name,
    ),
  );
  const wanted = [...new Set(manifests.map((m) => m.namespace).filter((n): n is string => n !== null))].filter(
    (n) => !existing.has(n) && !declared.has(n),
  );
  for (const name of wanted)
    await create({
      where: `--apply: the namespace ${name} its objects name`,
      kind: 'Namespace',
      name,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  let version = '0';
  for (const m of [
    ...manifests.filter((x) => x.kind === 'Namespace'),
    ...manifests.filter((x) => x.kind !== 'Namespace'),
  ]) {
    const made = await create(m);
    if (m.kind === 'Deployment' && m.name === deployment) version = made.metadata?.resourceVersion ?? '0';
  }
  return version;
}

type Raw = Record<string, any>;

const atRest = (d: Raw) => {
  const want = d.spec?.replicas ?? 1;
  const st = d.status ?? {};
  return (
    (st.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
    st.updatedReplicas === want &&
    st.availableReplicas === want &&
    st.replicas === want
  );
};

/** Until the Deployment just made is available, on a watch from its create; at most `timeoutMs`. */
export async function waitAvailable(
  cluster: Cluster,
  namespace: string,
  name: string,
  fromVersion: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  let last: Raw | null = null;
  let gaveUp = false;
  let wake = () => {};
  const settled = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stream = new WatchStream<Raw>(
    cluster,
    { path: COLLECTIONS.deployments(namespace), query: { fieldSelector: `metadata.name=${name}` } },
    fromVersion,
    {
      event: (_type, d) => {
        last = d;
        if (atRest(d)) wake();
      },
      life: (event) => {
        if (event === 'gave-up') {
          gaveUp = true;
          wake();
        }
      },
    },
  );
  const timer = setTimeout(wake, timeoutMs);
  signal.addEventListener('abort', wake, { once: true });
  try {
    await stream.start();
    await settled;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', wake);
    stream.stop();
  }
  if (signal.aborted)
    throw new TermlabError('INTERRUPTED', `interrupted while deployment/${name} from --apply was starting`);
  if (gaveUp) throw new TermlabError('API_UNREACHABLE', `the watch on deployment/${name} gave up`);
  const d = last as Raw | null;
  if (!d || !atRest(d)) {
    const st = d?.status ?? {};
    throw new TermlabError(
      'POD_NOT_READY',
      `--apply: deployment/${name} was not available within ${timeoutMs / 1000}s on the simulated cluster (${st.updatedReplicas ?? 0} updated, ${st.availableReplicas ?? 0} available of ${d?.spec?.replicas ?? '?'}): is its image one the simulated cluster runs (termlab/lab-server), and does its readiness probe pass?`,
      { deployment: name, namespace },
    );
  }
}
