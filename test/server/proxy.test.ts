// The lab server's proxy mode (server/proxy.ts): a real app and a real proxy, each its own process,
// requests through the proxy on real sockets, and TERM to the proxy in each of its two modes.
import { createServer } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { parseProxyLine } from '../../server/contract-schemas.ts';
import { getJson, readLines, startLabServer, startProxy, type LabProcess } from '../support/labServer.ts';
import { spawnTs, type EventedProcess } from '../support/processes.ts';

const started: EventedProcess[] = [];
afterEach(() => {
  for (const proc of started.splice(0))
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
});

async function pair(onTerm: 'exit' | 'drain'): Promise<{ app: LabProcess; proxy: LabProcess }> {
  const app = await startLabServer('graceful', { POD_UID: 'uid-app' });
  started.push(app);
  const proxy = await startProxy(app.port, onTerm, { POD_UID: 'uid-app' });
  started.push(proxy);
  return { app, proxy };
}

/** A port nothing listens on: one the kernel just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function proxyEvents(proxy: LabProcess): string[] {
  return proxy.rawLines.map((text) => {
    const parsed = parseProxyLine(JSON.parse(text));
    expect(parsed, text).toMatchObject({ kind: 'event' });
    return (parsed as { event: string }).event;
  });
}

describe('proxy mode', () => {
  it('passes a request through to the app and back whole, and logs each step', async () => {
    const { app, proxy } = await pair('exit');
    const res = await request(`${proxy.base}/work?ms=600&id=through`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-pod-uid']).toBe('uid-app');
    expect(res.headers['x-request-id']).toBe('through');
    const { lines, error } = await readLines(res.body);
    expect(error).toBeNull();
    expect(lines.at(-1)).toMatchObject({ event: 'done', id: 'through' });
    const done = await proxy.waitForEvent((e) => e.event === 'upstream-done', 'upstream-done');
    // The app writes each line with JSON.stringify, so the same lines re-serialised are its bytes.
    const bodyBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(JSON.stringify(line) + '\n'), 0);
    expect(done).toMatchObject({ id: 'through', outcome: 'completed', status: 200, role: 'proxy', bytes: bodyBytes });
    // The app's own line comes down another pipe: waited for, not assumed read.
    await app.waitForEvent((e) => e.event === 'completed' && e.id === 'through', 'the app completed');
    expect(proxyEvents(proxy)).toEqual(['listening', 'accepted', 'forwarded', 'upstream-done']);
    expect(proxy.events[0]).toMatchObject({ upstreamPort: app.port, onTerm: 'exit' });

    proxy.child.kill('SIGTERM');
    expect(await proxy.exited).toEqual({ code: LAB_EXIT_CODES.immediate, signal: null });
  });

  it('exit: TERM ends the proxy at once and cuts the request the app was still answering', async () => {
    const { app, proxy } = await pair('exit');
    const res = await request(`${proxy.base}/work?ms=10000&id=cut`);
    const body = readLines(res.body);
    await app.waitForEvent((e) => e.event === 'accepted' && e.id === 'cut', 'the app accepted');
    await proxy.waitForEvent((e) => e.event === 'forwarded', 'forwarded');
    proxy.child.kill('SIGTERM');
    expect(await proxy.exited).toEqual({ code: LAB_EXIT_CODES.immediate, signal: null });
    const { lines, error } = await body;
    expect(error).not.toBeNull();
    expect(lines[0]).toMatchObject({ event: 'accepted', id: 'cut' });
    expect(lines.some((l) => l.event === 'done')).toBe(false);
    // The app was never signalled: it lost its client, the proxy's connection, when the proxy died.
    await app.waitForEvent((e) => e.event === 'aborted' && e.id === 'cut', 'the app saw its client go');
    expect(app.events.some((e) => e.event === 'signal')).toBe(false);
    expect(proxyEvents(proxy)).toEqual(['listening', 'accepted', 'forwarded', 'signal', 'exit']);
  });

  it('drain: TERM stops the proxy accepting; the open request completes, then it exits 0', async () => {
    const { app, proxy } = await pair('drain');
    const res = await request(`${proxy.base}/work?ms=1500&id=kept`);
    const body = readLines(res.body);
    await app.waitForEvent((e) => e.event === 'accepted' && e.id === 'kept', 'the app accepted');
    proxy.child.kill('SIGTERM');
    const draining = await proxy.waitForEvent((e) => e.event === 'draining', 'draining');
    expect(draining).toMatchObject({ active: 1 });
    // A second TERM changes nothing but is on record.
    proxy.child.kill('SIGTERM');
    await proxy.waitForEvent((e) => e.event === 'signal' && e.repeated === true, 'the repeated signal');
    // The listener is closed: a new connection is refused (or reset, if it beat the close into the backlog).
    await expect(request(`${proxy.base}/proxy/healthz`)).rejects.toMatchObject({
      code: expect.stringMatching(/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)$/),
    });
    const { lines, error } = await body;
    expect(error).toBeNull();
    expect(lines.at(-1)).toMatchObject({ event: 'done', id: 'kept' });
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    expect(proxyEvents(proxy)).toEqual([
      'listening',
      'accepted',
      'forwarded',
      'signal',
      'draining',
      'signal',
      'upstream-done',
      'drained',
      'exit',
    ]);
    expect(proxy.events.find((e) => e.event === 'upstream-done')).toMatchObject({ outcome: 'completed', status: 200 });
    await app.waitForEvent((e) => e.event === 'completed' && e.id === 'kept', 'the app completed');
  });

  it('drain with nothing open exits 0 at once', async () => {
    const { proxy } = await pair('drain');
    proxy.child.kill('SIGINT');
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    expect(proxyEvents(proxy)).toEqual(['listening', 'signal', 'draining', 'drained', 'exit']);
  });

  it('the app killed mid-answer: the proxy cuts the client too and says so', async () => {
    const { app, proxy } = await pair('drain');
    const res = await request(`${proxy.base}/work?ms=10000&id=dies`);
    const body = readLines(res.body);
    await app.waitForEvent((e) => e.event === 'accepted', 'the app accepted');
    app.child.kill('SIGKILL');
    const { lines, error } = await body;
    expect(error).not.toBeNull();
    expect(lines.some((l) => l.event === 'done')).toBe(false);
    expect(await proxy.waitForEvent((e) => e.event === 'upstream-done', 'upstream-done')).toMatchObject({
      id: 'dies',
      outcome: 'cut',
      status: 200,
    });
  });

  it('answers its own health and readiness without the app; with no app a request is a 502, logged failed', async () => {
    const proxy = await startProxy(await closedPort(), 'drain');
    started.push(proxy);
    expect(await getJson(`${proxy.base}/proxy/healthz`)).toMatchObject({
      status: 200,
      body: { alive: true, by: 'proxy' },
    });
    expect(await getJson(`${proxy.base}/proxy/readyz`)).toMatchObject({ status: 200, body: { ready: true } });
    const answer = await getJson(`${proxy.base}/work?ms=10&id=nobody`);
    expect(answer).toMatchObject({ status: 502, body: { code: 'ECONNREFUSED', id: 'nobody' } });
    expect(await proxy.waitForEvent((e) => e.event === 'upstream-done', 'upstream-done')).toMatchObject({
      outcome: 'failed',
      status: null,
      error: 'ECONNREFUSED',
    });
    expect(proxyEvents(proxy)).toEqual(['listening', 'accepted', 'upstream-done']);
  });

  it.each([
    ['no upstream port', { PROXY_UPSTREAM_PORT: '' }, /PROXY_UPSTREAM_PORT: expected the app container's port/],
    [
      "the proxy's own port as the upstream",
      { PROXY_UPSTREAM_PORT: '8080', PORT: '8080' },
      /PROXY_UPSTREAM_PORT: 8080 is the proxy's own PORT/,
    ],
    [
      'an unknown TERM behaviour',
      { PROXY_UPSTREAM_PORT: '9000', PROXY_ON_TERM: 'linger' },
      /PROXY_ON_TERM: expected exit or drain, got "linger"/,
    ],
  ])('refuses %s, naming the setting, with the config exit code', async (_name, env, message) => {
    const proc = spawnTs('server/main.ts', [], { LAB_MODE: 'proxy', PORT: '0', HOST: '127.0.0.1', ...env });
    started.push(proc);
    expect(await proc.exited).toEqual({ code: LAB_EXIT_CODES.config, signal: null });
    expect(proc.stderr()).toMatch(message);
  });
});

describe("the proxy's lines through the contract", () => {
  const stamp = { time: '2026-01-01T00:00:00.000Z', mono: 1, role: 'proxy' };

  it("an app's line is not a proxy line, and a proxy line missing a field is malformed, naming it", () => {
    expect(parseProxyLine({ event: 'signal', time: stamp.time, mono: 1, signal: 'SIGTERM' })).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('field role'),
    });
    expect(
      parseProxyLine({ event: 'upstream-done', ...stamp, id: 'a', outcome: 'completed', status: 200, elapsedMs: 3 }),
    ).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('field bytes') });
    expect(
      parseProxyLine({
        event: 'upstream-done',
        ...stamp,
        id: 'a',
        outcome: 'lost',
        status: 200,
        bytes: 1,
        elapsedMs: 3,
      }),
    ).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('field outcome') });
    expect(parseProxyLine({ event: 'exit', ...stamp, code: 0 })).toMatchObject({
      kind: 'event',
      event: 'exit',
      line: { code: 0, role: 'proxy' },
    });
    expect(parseProxyLine({ event: 'note', ...stamp })).toMatchObject({ kind: 'other', event: 'note' });
  });
});
