// The log follower records when its stream ended by itself (the kubelet's reader found the container gone),
// and records nothing when the harness stopped it or the API cut it for good: the fidelity comparison times the
// kubelet's removal of a container from that end, so an end the harness made must never look like one.
import { createServer, type ServerResponse, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standInCluster } from '../support/stand-in-api.ts';
import type { Cluster } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { LogFollower } from '../../harness/run/logs.ts';

let server: Server;
let cluster: Cluster;
/** The open follows, by pod name: the test ends each one itself. */
const open = new Map<string, ServerResponse[]>();
const waiting = new Map<string, () => void>();
const LINE_1 = '2026-12-02T04:00:00.100000000Z {"event":"listening"}\n';
const LINE_2 = '2026-12-02T04:00:01.200000000Z {"event":"exit","code":0}\n';

beforeAll(async () => {
  // pods/log as the API serves it: 200 at once, lines as they come, the end when the test says.
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const pod = /\/pods\/([^/]+)\/log$/.exec(url.pathname)?.[1];
    if (!pod) {
      res.writeHead(404).end();
      return;
    }
    if (url.searchParams.get('follow') !== 'true') {
      res.writeHead(200).end(LINE_1);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write(url.searchParams.has('sinceTime') ? LINE_1 + LINE_2 : LINE_1);
    open.set(pod, [...(open.get(pod) ?? []), res]);
    waiting.get(pod)?.();
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

/** Resolves once the API has answered `count` follows of `pod`. */
function follows(pod: string, count: number): Promise<ServerResponse[]> {
  return new Promise((resolve) => {
    const check = () => {
      if ((open.get(pod)?.length ?? 0) >= count) {
        waiting.delete(pod);
        resolve(open.get(pod)!);
      }
    };
    waiting.set(pod, check);
    check();
  });
}

async function started(pod: string): Promise<{ follower: LogFollower; clock: RunClock }> {
  const clock = new RunClock();
  const follower = new LogFollower();
  await follower.start(cluster, 'ns', pod, 'lab', clock);
  await follows(pod, 1);
  return { follower, clock };
}

describe('the log follower', () => {
  it('records when a stream the API ended whole ended, after its last line', async () => {
    const { follower, clock } = await started('ends');
    const [res] = await follows('ends', 1);
    const before = clock.now();
    res!.end(LINE_2);
    expect(await follower.waitForEnd(60_000)).toBe(true);
    expect(follower.error).toBeNull();
    expect(follower.lines.map((l) => l.text)).toEqual(['{"event":"listening"}', '{"event":"exit","code":0}']);
    expect(follower.streamEndedAt!.mono).toBeGreaterThanOrEqual(before.mono);
    expect(follower.streamEndedAt!.mono).toBeGreaterThanOrEqual(follower.lines.at(-1)!.receivedAt.mono);
  });

  it('records no end for a stream the harness stopped, even when the API closes it afterwards', async () => {
    const { follower } = await started('stopped');
    follower.stop();
    expect(await follower.waitForEnd(60_000)).toBe(true);
    const [res] = await follows('stopped', 1);
    res!.end();
    expect(follower.streamEndedAt).toBeNull();
  });

  it('records the end of the stream it followed again after a cut, not the cut', async () => {
    const { follower, clock } = await started('cut');
    const [first] = await follows('cut', 1);
    first!.socket!.destroy();
    const [, again] = await follows('cut', 2);
    // The cut is past: the second follow is open, so nothing has ended yet.
    expect(follower.resumed).toBe(1);
    expect(follower.streamEndedAt).toBeNull();
    const before = clock.now();
    again!.end();
    expect(await follower.waitForEnd(60_000)).toBe(true);
    expect(follower.lines.map((l) => l.text)).toEqual(['{"event":"listening"}', '{"event":"exit","code":0}']);
    expect(follower.streamEndedAt!.mono).toBeGreaterThanOrEqual(before.mono);
  });
});
