// A namespace is ready for a student's pods only once it has its ServiceAccount "default": until
// kube-controller-manager's serviceaccount controller makes it (a moment after the namespace), the API
// server's ServiceAccount admission refuses every pod there ("error looking up service account").
import { TermlabError } from '../../lib/errors.ts';
import { WatchStream, withRetry, type Cluster } from '../kube/index.ts';
import { getText } from '../kube/http.ts';

export const DEFAULT_ACCOUNT_WAIT_MS = 30_000;

type Account = { metadata?: { name?: string; resourceVersion?: string } };

/** Resolves once namespace/default exists: a list, then a watch from it; at most `timeoutMs`. */
export async function waitForDefaultAccount(
  cluster: Cluster,
  namespace: string,
  signal?: AbortSignal,
  timeoutMs = DEFAULT_ACCOUNT_WAIT_MS,
): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  const query = { fieldSelector: 'metadata.name=default' };
  const list = JSON.parse(
    await withRetry(cluster, `list ${path}`, () => getText(cluster, path, query), { signal }),
  ) as { items?: Account[]; metadata?: { resourceVersion?: string } };
  if (list.items?.length) return;
  let found = false;
  let gaveUp = false;
  let wake = () => {};
  const settled = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stream = new WatchStream<Account>(cluster, { path, query }, list.metadata?.resourceVersion ?? '0', {
    event: (type) => {
      if (type !== 'DELETED') {
        found = true;
        wake();
      }
    },
    life: (event, _version, _detail, listed) => {
      if (listed?.length) {
        found = true;
        wake();
      }
      if (event === 'gave-up') {
        gaveUp = true;
        wake();
      }
    },
  });
  const timer = setTimeout(wake, timeoutMs);
  signal?.addEventListener('abort', wake, { once: true });
  try {
    await stream.start();
    await settled;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', wake);
    stream.stop();
  }
  if (found) return;
  if (signal?.aborted)
    throw new TermlabError('INTERRUPTED', `interrupted while waiting for serviceaccount ${namespace}/default`);
  if (gaveUp) throw new TermlabError('API_UNREACHABLE', `the watch on serviceaccount ${namespace}/default gave up`);
  throw new TermlabError(
    'CLASS_NOT_READY',
    `namespace ${namespace} still has no serviceaccount "default" after ${timeoutMs / 1000}s, and the API server refuses pods there until it has: is kube-controller-manager (its serviceaccount controller) running? No kubeconfig was written`,
    { namespace },
  );
}
