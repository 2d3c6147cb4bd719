// The app's keep-alive variants at TERM (LAB_KEEPALIVE, docs/server.md), seen from kept-alive client
// sockets: real processes, real sockets, real signals. One socket idle at TERM, one with work in flight.
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type LabProcess, startLabServer } from '../support/labServer.ts';
import { spawnTs } from '../support/processes.ts';

let lab: LabProcess | undefined;
const agents: Agent[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL');
  for (const a of agents.splice(0)) a.destroy();
  for (const s of sockets.splice(0)) s.destroy();
});

/** One kept-alive connection of its own (an Agent of one socket), as an edge's pool keeps one. */
function keptAlive(): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return agent;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  socket: Socket;
  reused: boolean;
  /**
   * Resolves when the socket closes. The Agent closes a free socket only when the server ends it (Node 24
   * shows no 'end' on a free socket, only the 'close'), or after an answer that said Connection: close.
   */
  closed: Promise<void>;
}

function get(agent: Agent, base: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body,
          socket: req.socket!,
          reused: req.reusedSocket,
          closed: closedOf.get(req.socket!)!,
        }),
      );
    });
    req.on('socket', (socket) => {
      if (!closedOf.has(socket)) closedOf.set(socket, new Promise((done) => socket.once('close', () => done())));
    });
    req.on('error', reject);
    req.end();
  });
}
const closedOf = new WeakMap<Socket, Promise<void>>();

describe('LAB_KEEPALIVE=polite', () => {
  it('leaves an idle kept-alive socket open at TERM and answers on it with Connection: close; the work in flight finishes, then its socket closes, then it exits 0', async () => {
    lab = await startLabServer('graceful', { LAB_KEEPALIVE: 'polite' });
    expect(lab.events[0]).toMatchObject({ event: 'listening', keepAlive: 'polite', keepAliveTimeoutMs: 5000 });
    const idle = keptAlive();
    const first = await get(idle, lab.base, '/healthz');
    expect(first.headers.connection).toBe('keep-alive');
    const busy = keptAlive();
    const work = get(busy, lab.base, '/work?ms=1500&id=inflight');
    await lab.waitForEvent((e) => e.event === 'accepted' && e.id === 'inflight', 'the work accepted');

    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    // The socket that was idle at TERM is still open: the next request on it is answered, and told to leave.
    const after = await get(idle, lab.base, '/readyz');
    expect(after).toMatchObject({ status: 503, reused: true });
    expect(after.socket).toBe(first.socket);
    expect(after.headers.connection).toBe('close');
    await after.closed;

    const done = await work;
    expect(done.status).toBe(200);
    // Its headers went out before TERM (keep-alive); once its answer is done nothing is on it, so it closes.
    expect(done.headers.connection).toBe('keep-alive');
    expect(done.body.trimEnd().split('\n').at(-1)).toContain('"event":"done"');
    await done.closed;

    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect(lab.events.map((e) => e.event).slice(-2)).toEqual(['drained', 'exit']);
  });

  it('with no work in flight it still waits for its idle sockets: one is answered after TERM, the other ended at its keep-alive timeout, then it exits', async () => {
    lab = await startLabServer('graceful', { LAB_KEEPALIVE: 'polite', LAB_KEEPALIVE_TIMEOUT_MS: '1000' });
    // Raw sockets: Node's own client would close them first (it leaves a second before the server's hint).
    const used = await rawKeptAlive(lab.port);
    const left = await rawKeptAlive(lab.port);
    // The app's own timeout is what it tells its clients.
    expect(left.text()).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    // Nothing is at work: naive would have exited already. Polite is still there to answer, and says to leave.
    used.socket.write('GET /readyz HTTP/1.1\r\nHost: lab\r\n\r\n');
    await used.fin;
    expect(used.text()).toMatch(/HTTP\/1\.1 503 .*\r\nConnection: close\r\n.*\{"ready":false\}\n$/is);
    // The other, never used again, is ended by the server (a FIN, not a reset) at its idle timeout.
    await left.fin;
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect(lab.events.map((e) => e.event)).toEqual(['listening', 'signal', 'draining', 'drained', 'exit']);
  });

  it('ends a socket that never carried a request at its keep-alive timeout after TERM, then exits (no SIGKILL at the grace)', async () => {
    // Go's Transport (under Traefik) pools a connection it dialled for a request another connection served
    // first (transport.go dialConnFor: putOrCloseIdleConn), so an edge holds sockets the app never answered on.
    // Node arms its keep-alive timer only after an answer: such a socket had none (on the node, two polite pods
    // waited for one until their SIGKILL, 25 s after TERM).
    lab = await startLabServer('graceful', { LAB_KEEPALIVE: 'polite', LAB_KEEPALIVE_TIMEOUT_MS: '1000' });
    const unused = connect({ host: '127.0.0.1', port: lab.port });
    sockets.push(unused);
    const fin = new Promise<void>((resolve) => unused.once('end', () => resolve()));
    // Accepted in order: once a later connection is answered, the server holds the unused one.
    const used = await rawKeptAlive(lab.port);
    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    await fin;
    await used.fin;
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect(lab.events.map((e) => e.event)).toEqual(['listening', 'signal', 'draining', 'drained', 'exit']);
  });
});

/** A raw socket that has had one answer (GET /healthz) and is kept alive. */
async function rawKeptAlive(port: number) {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  let raw = '';
  const answered = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
      if (raw.endsWith('{"alive":true}\n')) resolve();
    }),
  );
  const fin = new Promise<void>((resolve) => socket.once('end', () => resolve()));
  socket.write('GET /healthz HTTP/1.1\r\nHost: lab\r\n\r\n');
  await answered;
  return { socket, fin, text: () => raw };
}

describe('LAB_KEEPALIVE=naive', () => {
  it("closes the idle kept-alive socket at TERM (Node's server.close()); the work in flight finishes and it exits 0", async () => {
    lab = await startLabServer('graceful', { LAB_KEEPALIVE: 'naive' });
    expect(lab.events[0]).toMatchObject({ event: 'listening', keepAlive: 'naive', keepAliveTimeoutMs: 5000 });
    const idle = keptAlive();
    const first = await get(idle, lab.base, '/healthz');
    expect(first.headers.connection).toBe('keep-alive');
    const busy = keptAlive();
    const work = get(busy, lab.base, '/work?ms=1500&id=inflight');
    await lab.waitForEvent((e) => e.event === 'accepted' && e.id === 'inflight', 'the work accepted');
    expect(first.socket.destroyed).toBe(false);

    lab.child.kill('SIGTERM');
    // The idle socket is ended by the server at TERM, while the work is still running.
    await first.closed;
    expect(lab.events.some((e) => e.event === 'completed')).toBe(false);

    const done = await work;
    expect(done.status).toBe(200);
    expect(done.headers.connection).toBe('keep-alive');
    expect(done.body.trimEnd().split('\n').at(-1)).toContain('"event":"done"');
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect(lab.events.map((e) => e.event).slice(-2)).toEqual(['drained', 'exit']);
  });
});

describe('keep-alive settings', () => {
  it('unset: the listening line is the one it always was', async () => {
    lab = await startLabServer('graceful');
    expect(Object.keys(lab.events[0]!)).not.toContain('keepAlive');
    expect(Object.keys(lab.events[0]!)).not.toContain('keepAliveTimeoutMs');
  });

  it.each([
    ['LAB_KEEPALIVE', 'rude'],
    ['LAB_KEEPALIVE_TIMEOUT_MS', '0'],
    ['LAB_KEEPALIVE_TIMEOUT_MS', '5s'],
  ])('%s=%s is refused with exit 2, naming it', async (name, value) => {
    const proc = spawnTs('server/main.ts', ['--port', '0', '--host', '127.0.0.1'], { [name]: value });
    lab = { ...proc, port: 0, base: '' };
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr()).toContain(`${name}:`);
  });
});
