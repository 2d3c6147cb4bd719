// The load generator (LAB_MODE=load) on the wire: kept-alive reuse, POST bodies, the Host header, the
// request id header, a non-2xx body's head, latency from the due time, and a default pool that does
// not cap the rate asked for. Real processes and sockets; a stand-in server records what arrives.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLabServer } from '../support/labServer.ts';
import { type EventedProcess, type JsonEvent, spawnTs } from '../support/processes.ts';

const running: EventedProcess[] = [];
const servers: Server[] = [];
afterEach(() => {
  for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const s of servers.splice(0)) {
    s.close();
    s.closeAllConnections();
  }
});

interface Arrived {
  socket: number;
  method: string;
  host: string | undefined;
  requestId: string | undefined;
  body: string;
  path: string;
}

/** A server that records each request (which socket it came on) and answers with `answer`. */
async function standIn(answer: (req: IncomingMessage, res: ServerResponse, arrived: Arrived) => void) {
  const arrived: Arrived[] = [];
  const socketIds = new WeakMap<Socket, number>();
  let sockets = 0;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      if (!socketIds.has(req.socket)) socketIds.set(req.socket, ++sockets);
      const a: Arrived = {
        socket: socketIds.get(req.socket)!,
        method: req.method!,
        host: req.headers.host,
        requestId: req.headers['x-termlab-request'] as string | undefined,
        body,
        path: req.url!,
      };
      arrived.push(a);
      answer(req, res, a);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { arrived, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const json = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

function startLoad(env: Record<string, string>): EventedProcess {
  const proc = spawnTs('server/main.ts', [], {
    LAB_MODE: 'load',
    LOAD_RATE: '50',
    LOAD_WORK_MS: '1',
    LOAD_DURATION_MS: '400',
    POD_NAME: 'load-abc12',
    ...env,
  });
  running.push(proc);
  return proc;
}

const requestsOf = (p: EventedProcess) =>
  p.events.filter((e) => e.event === 'request') as (JsonEvent & Record<string, any>)[];

describe('load mode on the wire', () => {
  it('LOAD_KEEPALIVE=1 reuses its connections: as many new ones as sockets the server saw, every other request reused', async () => {
    // Answers take 10 ms and 400/s are due on two connections: requests queue, and each is sent as another
    // ends (the Agent then hands it the socket being freed, which Node's reusedSocket does not count).
    const server = await standIn((_req, res) => void setTimeout(() => json(res, 200, '{"ok":true}'), 10));
    const load = startLoad({
      LOAD_TARGET: server.base,
      LOAD_PATH: '/ping',
      LOAD_KEEPALIVE: '1',
      LOAD_CONNECTIONS: '2',
      LOAD_RATE: '400',
      LOAD_DURATION_MS: '50',
    });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = requestsOf(load);
    expect(requests).toHaveLength(20);
    expect(requests.every((r) => r.outcome === 'completed' && r.status === 200)).toBe(true);
    const sockets = new Set(server.arrived.map((a) => a.socket)).size;
    expect(sockets).toBeLessThanOrEqual(2);
    expect(requests.filter((r) => r.reused === false)).toHaveLength(sockets);
    expect(requests.filter((r) => r.reused === true)).toHaveLength(20 - sockets);
    expect(load.events[0]).toMatchObject({ event: 'load-start', keepAlive: true, connections: 2 });
  });

  it('without it, each request has a connection of its own, none reused', async () => {
    const server = await standIn((_req, res) => json(res, 200, '{"ok":true}'));
    const load = startLoad({ LOAD_TARGET: server.base, LOAD_PATH: '/ping', LOAD_CONNECTIONS: '2' });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    expect(new Set(server.arrived.map((a) => a.socket)).size).toBe(20);
    expect(requestsOf(load).every((r) => r.reused === false && r.outcome === 'completed')).toBe(true);
  });

  it('sends the Host header asked for and a request id unique per run (the pod name and the id) on every request', async () => {
    const server = await standIn((_req, res) => json(res, 200, '{"ok":true}'));
    const load = startLoad({ LOAD_TARGET: server.base, LOAD_PATH: '/ping', LOAD_HOST: 'web.termlab.test' });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = requestsOf(load);
    expect(server.arrived).toHaveLength(20);
    expect(server.arrived.every((a) => a.host === 'web.termlab.test' && a.method === 'GET')).toBe(true);
    const ids = server.arrived.map((a) => a.requestId);
    expect(new Set(ids).size).toBe(20);
    // Each line names the header it sent: the access log's request_X-Termlab-Request joins on it.
    expect(requests.map((r) => r.requestId).sort()).toEqual([...ids].sort());
    for (const r of requests) expect(r.requestId).toBe(`load-abc12-${r.id}`);
  });

  it('LOAD_METHOD=POST sends a small body, which reaches the lab server whole', async () => {
    const lab = await startLabServer('graceful', { POD_UID: 'post-pod' });
    running.push(lab);
    const load = startLoad({ LOAD_TARGET: lab.base, LOAD_METHOD: 'POST', LOAD_DURATION_MS: '100', LOAD_RATE: '20' });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = requestsOf(load);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.method === 'POST' && r.outcome === 'completed')).toBe(true);
    const last = requests.at(-1)!.id;
    await lab.waitForEvent((e) => e.event === 'completed' && e.id === last, 'the last POST completed');
    const accepted = lab.events.filter((e) => e.event === 'accepted');
    expect(accepted.map((e) => e.id).sort()).toEqual(requests.map((r) => r.id).sort());
    const sent = Buffer.byteLength(`{"id":"L1","from":"termlab-load"}\n`);
    expect(accepted.find((e) => e.id === 'L1')).toMatchObject({ method: 'POST', bodyBytes: sent });
  });

  it("keeps the first 120 bytes of a non-2xx answer's body, and none of a 2xx one", async () => {
    const page = `Bad Gateway: the upstream closed the connection ${'x'.repeat(200)}`;
    const server = await standIn((_req, res, a) =>
      a.requestId?.endsWith('-L1') ? json(res, 200, '{"ok":true}') : json(res, 502, page),
    );
    const load = startLoad({ LOAD_TARGET: server.base, LOAD_PATH: '/ping', LOAD_DURATION_MS: '100', LOAD_RATE: '20' });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const [first, second] = requestsOf(load);
    expect(first).toMatchObject({ status: 200, outcome: 'completed', bodyHead: null });
    expect(second).toMatchObject({ status: 502, outcome: 'http-error', bodyHead: page.slice(0, 120) });
  });

  it('measures latency from the due time: behind a stalled request, the ones waiting for the connection show their wait', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const durationMs = 300;
    let load!: EventedProcess;
    const server = await standIn((_req, res, a) => {
      if (!a.requestId?.endsWith('-L1')) return json(res, 200, '{"ok":true}');
      // Held until the schedule has made every other request due (its end on the load's own wall clock).
      void load
        .waitForEvent((e) => e.event === 'load-start', 'load-start')
        .then((start) => {
          setTimeout(release, Math.max(0, Date.parse(start.time) + durationMs + 50 - Date.now()));
        });
      void held.then(() => json(res, 200, '{"ok":true}'));
    });
    load = startLoad({
      LOAD_TARGET: server.base,
      LOAD_PATH: '/ping',
      LOAD_CONNECTIONS: '1',
      LOAD_RATE: '20',
      LOAD_DURATION_MS: String(durationMs),
    });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = requestsOf(load);
    expect(requests).toHaveLength(6);
    const [stalled, ...behind] = requests;
    for (const r of requests) expect(r.latencyMs).toBeCloseTo(r.ended.mono - r.dueMono, 1);
    for (const r of behind) {
      // Due while the one connection was held, sent only after it ended: its wait counts.
      expect(r.dueMono).toBeLessThan(stalled!.ended.mono);
      expect(r.sent.mono).toBeGreaterThanOrEqual(stalled!.ended.mono);
      expect(r.latencyMs).toBeGreaterThanOrEqual(stalled!.ended.mono - r.dueMono);
      // From its send alone it would look fast: the difference is exactly the wait.
      expect(r.latencyMs - (r.ended.mono - r.sent.mono)).toBeCloseTo(r.sent.mono - r.dueMono, 1);
    }
  });

  it('by default sizes its pool from the rate: 1,000 req/s of 300 ms requests keep far more than 32 open at once', async () => {
    const lab = await startLabServer('graceful');
    running.push(lab);
    const load = startLoad({ LOAD_TARGET: lab.base, LOAD_RATE: '1000', LOAD_WORK_MS: '300', LOAD_DURATION_MS: '300' });
    expect(await load.exited).toEqual({ code: 0, signal: null });
    // rate × (work + 1 s) = 1,300, held to the cap.
    expect(load.events[0]).toMatchObject({ event: 'load-start', connections: 1024 });
    const requests = requestsOf(load);
    expect(requests).toHaveLength(300);
    expect(requests.every((r) => r.outcome === 'completed')).toBe(true);
    // The most in flight at once, from the lines' own send and end: the old default held it to 32.
    const steps = requests.flatMap((r) => [
      [r.sent.mono, 1],
      [r.ended.mono, -1],
    ]) as [number, number][];
    steps.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let most = 0;
    for (const [, d] of steps) most = Math.max(most, (open += d));
    expect(most).toBeGreaterThan(32);
  });

  it.each([
    ['LOAD_KEEPALIVE', 'yes'],
    ['LOAD_METHOD', 'PUT'],
    ['LOAD_HOST', 'web example'],
  ])('refuses %s=%s with exit 2, naming it', async (name, value) => {
    const load = startLoad({ LOAD_TARGET: 'http://127.0.0.1:1', [name]: value });
    expect((await load.exited).code).toBe(2);
    expect(load.stderr()).toContain(`${name}:`);
  });
});
