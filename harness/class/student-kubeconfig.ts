// The kubeconfig a student gets: the instructor's cluster (server and CA, inlined), the student's
// bounded ServiceAccount token, and the student's own namespace as the context's namespace.
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { TermlabError } from '../../lib/errors.ts';

export interface StudentCluster {
  server: string;
  /** The CA bundle, base64 (certificate-authority-data). */
  caData?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
}

export interface StudentKubeconfig {
  cluster: StudentCluster;
  /** The kubeconfig's names: cluster, user and context are all `termlab-<student>`. */
  student: string;
  namespace: string;
  token: string;
  expiresAt: string;
}

/** The cluster part of the instructor's current context, with a CA file read into the kubeconfig. */
export function clusterOf(current: {
  server: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
}): StudentCluster {
  let caData = current.caData;
  if (!caData && current.caFile) {
    try {
      caData = readFileSync(current.caFile).toString('base64');
    } catch (error) {
      throw new TermlabError(
        'INPUT_UNREADABLE',
        `the kubeconfig's certificate-authority ${current.caFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): a student's kubeconfig must carry the CA`,
        { path: current.caFile },
      );
    }
  }
  return {
    server: current.server,
    ...(caData ? { caData } : {}),
    ...(current.skipTLSVerify ? { skipTLSVerify: true } : {}),
    ...(current.tlsServerName ? { tlsServerName: current.tlsServerName } : {}),
  };
}

export function renderStudentKubeconfig(k: StudentKubeconfig): string {
  const name = `termlab-${k.student}`;
  const cluster: Record<string, unknown> = { server: k.cluster.server };
  if (k.cluster.caData) cluster['certificate-authority-data'] = k.cluster.caData;
  if (k.cluster.skipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
  if (k.cluster.tlsServerName) cluster['tls-server-name'] = k.cluster.tlsServerName;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: { token: k.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: k.namespace } }],
    'current-context': name,
  };
  return `# termlab student ${k.student}: namespace ${k.namespace}; this token expires ${k.expiresAt} (ask the instructor for a new file then)\n${stringify(doc)}`;
}
