// `termlab class student` hands out a kubeconfig only once the student's namespace has its
// ServiceAccount "default" (before that the API server refuses every pod there; a student's first run
// on the real node was refused with 403). An HTTP API answering the list and the watch as the real one does.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForDefaultAccount } from '../../harness/class/default-account.ts';
import { connect } from '../../harness/kube/index.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;
let server: Server | null = null;

async function api(handler: Handler) {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/version') {
      res.end(JSON.stringify({ major: '1', minor: '37', gitVersion: 'v1.37.2' }));
      return;
    }
    handler(req, res, url);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfigText = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'fake',
    clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u' } }],
  });
  return connect({ kubeconfigText });
}
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = null;
});

const account = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'default', namespace: 'class-alice', resourceVersion: '7' },
};

describe('waiting for a namespace\'s ServiceAccount "default"', () => {
  it('returns at once when the list finds it, without a watch', async () => {
    const seen: string[] = [];
    const cluster = await api((_req, res, url) => {
      seen.push(`${url.pathname}?${url.searchParams.get('fieldSelector')} watch=${url.searchParams.get('watch')}`);
      res.end(JSON.stringify({ kind: 'ServiceAccountList', items: [account], metadata: { resourceVersion: '7' } }));
    });
    await waitForDefaultAccount(cluster, 'class-alice');
    expect(seen).toEqual(['/api/v1/namespaces/class-alice/serviceaccounts?metadata.name=default watch=null']);
  });

  it("waits on a watch from the list's version until the controller has made it", async () => {
    let added = false;
    const cluster = await api((_req, res, url) => {
      if (url.searchParams.get('watch') !== 'true') {
        res.end(JSON.stringify({ kind: 'ServiceAccountList', items: [], metadata: { resourceVersion: '5' } }));
        return;
      }
      expect(url.searchParams.get('resourceVersion')).toBe('5');
      res.writeHead(200);
      res.write(
        `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ServiceAccount', metadata: { resourceVersion: '6' } } })}\n`,
      );
      // The controller makes it once the watch is there: the wait must not have ended before.
      setImmediate(() => {
        added = true;
        res.write(`${JSON.stringify({ type: 'ADDED', object: account })}\n`);
      });
    });
    await waitForDefaultAccount(cluster, 'class-alice');
    expect(added).toBe(true);
  });

  it('gives up after its bound with an error that names the namespace and the controller', async () => {
    const cluster = await api((_req, res, url) => {
      if (url.searchParams.get('watch') !== 'true') {
        res.end(JSON.stringify({ kind: 'ServiceAccountList', items: [], metadata: { resourceVersion: '5' } }));
        return;
      }
      res.writeHead(200);
      res.write('');
    });
    const error = await waitForDefaultAccount(cluster, 'class-alice', undefined, 300).catch((e) => e);
    expect(error.code).toBe('CLASS_NOT_READY');
    expect(error.message).toMatch(
      /namespace class-alice still has no serviceaccount "default" after 0.3s.*kube-controller-manager/,
    );
  });
});
