// A terminating pod's live read, as a rollout and a verification both take it (harness/run/live-reads.ts):
// the GET's answer when it is still the pod the watch showed terminating; else the watch event's object that
// showed the deletion, marked source: 'watch'. A verification's reads had no such fallback before they shared it.
import { createServer, type Server } from 'node:http';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standInCluster } from '../support/stand-in-api.ts';
import type { Cluster } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { LiveReads } from '../../harness/run/live-reads.ts';

const hook = { preStop: { exec: { command: ['lab-hook', 'sleep', '2000'] } } };
const pod = (name: string, uid: string, resourceVersion: string): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    uid,
    resourceVersion,
    deletionTimestamp: new Date('2026-12-02T04:00:00Z'),
    labels: { 'pod-template-hash': 'abc' },
  },
  spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'app', image: 'app:1', lifecycle: hook }] },
});

let server: Server;
let cluster: Cluster;
beforeAll(async () => {
  // The pod GET as the API answers it: 'held' is still there, 'gone' ended within the round trip, 'renamed' is
  // a new pod of the same name (another UID).
  server = createServer((req, res) => {
    const name = /\/namespaces\/ns\/pods\/([^/?]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname)?.[1];
    const live =
      name === 'held' ? pod('held', 'uid-held', '12') : name === 'renamed' ? pod('renamed', 'uid-new', '30') : null;
    if (!live) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(live));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cluster = standInCluster(server);
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

describe('live reads of terminating pods', () => {
  it("keep the GET's pod when it is the one the watch showed, and the watch's object when the GET found nothing", async () => {
    const clock = new RunClock();
    const reads = new LiveReads({ cluster, namespace: 'ns', clock });
    const seen = (name: string, uid: string) => ({ at: clock.now(), pod: pod(name, uid, '10') });
    const seenHeld = seen('held', 'uid-held');
    const seenGone = seen('gone', 'uid-gone');
    const seenRenamed = seen('renamed', 'uid-old');
    reads.start('held', 'uid-held', '10', seenHeld);
    reads.start('gone', 'uid-gone', '10', seenGone);
    reads.start('renamed', 'uid-old', '10', seenRenamed);
    // A later event for a pod already being read starts no second read.
    reads.start('gone', 'uid-gone', '11', seen('gone', 'uid-gone'));
    await reads.settle();
    const [held, gone, renamed, ...more] = reads.settled();
    expect(more).toEqual([]);
    expect(held).toMatchObject({
      pod: 'held',
      found: true,
      uid: 'uid-held',
      resourceVersion: '12',
      templateHash: 'abc',
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'app', lifecycle: hook }],
    });
    expect(held).not.toHaveProperty('source');
    for (const [read, name, uid, at] of [
      [gone, 'gone', 'uid-gone', seenGone.at],
      [renamed, 'renamed', 'uid-old', seenRenamed.at],
    ] as const) {
      expect(read).toMatchObject({
        pod: name,
        source: 'watch',
        found: true,
        uid,
        resourceVersion: '10',
        after: { resourceVersion: '10' },
        at,
        containers: [{ name: 'app', lifecycle: hook }],
      });
    }
  });
});
