// Certificates and credentials: a CA and the API server's serving certificate (openssl), the
// service-account key pair, and static tokens for the node's own clients.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { CONTEXT, NODE_NAME, paths } from './layout.ts';
import { sh } from './steps.ts';

export interface Credentials {
  ca: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  tokensFile: string;
  tokens: Record<'admin' | 'kubelet' | 'controllerManager' | 'scheduler' | 'kubeProxy', string>;
}

const file = (name: string) => join(paths.pki, name);

export function ensureCredentials(): Credentials {
  mkdirSync(paths.pki, { recursive: true, mode: 0o700 });
  const c: Credentials = {
    ca: file('ca.crt'),
    serverCert: file('apiserver.crt'),
    serverKey: file('apiserver.key'),
    saKey: file('sa.key'),
    saPub: file('sa.pub'),
    tokensFile: file('tokens.csv'),
    tokens: { admin: '', kubelet: '', controllerManager: '', scheduler: '', kubeProxy: '' },
  };
  if (!existsSync(c.ca)) {
    sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file('ca.key'),
      '-out',
      c.ca,
      '-days',
      '30',
      '-subj',
      '/CN=termlab-node-ca',
    ]);
  }
  if (!existsSync(c.serverCert)) {
    writeFileSync(
      file('apiserver.ext'),
      'subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.96.0.1\nextendedKeyUsage=serverAuth\n',
    );
    sh('openssl', [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      c.serverKey,
      '-out',
      file('apiserver.csr'),
      '-subj',
      '/CN=kube-apiserver',
    ]);
    sh('openssl', [
      'x509',
      '-req',
      '-in',
      file('apiserver.csr'),
      '-CA',
      c.ca,
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      c.serverCert,
      '-days',
      '30',
      '-extfile',
      file('apiserver.ext'),
    ]);
  }
  if (!existsSync(c.saKey)) {
    sh('openssl', ['genrsa', '-out', c.saKey, '2048']);
    sh('openssl', ['rsa', '-in', c.saKey, '-pubout', '-out', c.saPub]);
  }
  // Static tokens: each client its own user and groups (token,user,uid,"groups").
  const users = {
    admin: ['termlab-admin', 'system:masters'],
    kubelet: [`system:node:${NODE_NAME}`, 'system:nodes'],
    controllerManager: ['system:kube-controller-manager', ''],
    scheduler: ['system:kube-scheduler', ''],
    // Bound to the ClusterRole system:node-proxier by the API server's bootstrap RBAC policy.
    kubeProxy: ['system:kube-proxy', ''],
  } as const;
  const lines: string[] = [];
  for (const [key, [user, group]] of Object.entries(users)) {
    const token = randomBytes(24).toString('hex');
    c.tokens[key as keyof Credentials['tokens']] = token;
    lines.push(`${token},${user},${user},"${group}"`);
  }
  writeFileSync(c.tokensFile, lines.join('\n') + '\n', { mode: 0o600 });
  return c;
}

export function kubeconfig(server: string, ca: string, token: string, user: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT, cluster: { server, 'certificate-authority': ca } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: CONTEXT, context: { cluster: CONTEXT, user, namespace: 'default' } }],
    'current-context': CONTEXT,
  });
}
