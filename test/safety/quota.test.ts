// A full ResourceQuota: the run waits with backoff and says so, then either gets its pod or ends with
// QUOTA_FULL naming the quota. The API server here answers as a real one does when the quota is full
// (403, "exceeded quota: …", the format seen on v1.37), over a real socket.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exitCodeFor, isTermlabError } from '../../lib/errors.ts';
import { connect } from '../../harness/kube/index.ts';
import { createPodWithinQuota, quotaRefusal } from '../../harness/safety/quota.ts';

const REFUSAL = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'pods "p" is forbidden: exceeded quota: termlab-quota, requested: pods=1, used: pods=8, limited: pods=8',
  reason: 'Forbidden',
  details: { name: 'p', kind: 'pods' },
  code: 403,
};

let server: Server | null = null;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** An API server whose quota is full for the first `full` creates. */
async function apiServer(full: number) {
  let creates = 0;
  server = createServer((req, res) => {
    if (req.url === '/version') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"gitVersion":"v1.37.2"}');
      return;
    }
    req.resume();
    req.on('end', () => {
      creates++;
      const ok = creates > full;
      res.writeHead(ok ? 201 : 403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          ok
            ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'termlab-alice', uid: 'u1' } }
            : REFUSAL,
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
  const cluster = await connect({
    kubeconfigText: `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "${url}", insecure-skip-tls-verify: true } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: c, context: { cluster: c, user: u } }]\ncurrent-context: c\n`,
  });
  return { cluster, creates: () => creates };
}

const body = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'i' }] },
};

describe('a full class quota', () => {
  it("is waited out with backoff, each wait said with the quota's use", async () => {
    const api = await apiServer(2);
    const waits: string[] = [];
    const pod = await createPodWithinQuota(api.cluster, 'termlab-alice', body, {
      maxWaitMs: 30_000,
      onWait: (t) => waits.push(t),
    });
    expect(pod.metadata?.uid).toBe('u1');
    expect(waits).toEqual([
      'waiting for the class quota: 8 of 8 pods in use (termlab-quota in termlab-alice); trying again in 1 s',
      'waiting for the class quota: 8 of 8 pods in use (termlab-quota in termlab-alice); trying again in 2 s',
    ]);
    expect(api.creates()).toBe(3);
  });

  it('ends with QUOTA_FULL (exit 3) naming the quota once the bound is passed, never a stack trace', async () => {
    const api = await apiServer(1000);
    const error = await createPodWithinQuota(api.cluster, 'termlab-alice', body, { maxWaitMs: 2_500 }).catch(
      (e: unknown) => e,
    );
    expect(isTermlabError(error) && error.code).toBe('QUOTA_FULL');
    expect(exitCodeFor('QUOTA_FULL')).toBe(3);
    expect((error as Error).message).toMatch(
      /^the class quota termlab-quota in termlab-alice stayed full for \d+ s \(bound 3 s, --quota-wait\): 8 of 8 pods in use;/,
    );
  });

  it('any other refusal is not a quota to wait for', async () => {
    expect(quotaRefusal(new Error('exceeded quota: x, requested: pods=1, used: pods=1, limited: pods=1'))).toBeNull();
  });
});
