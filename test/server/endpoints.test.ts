import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { getJson, readLines, startLabServer, type LabProcess } from '../support/labServer.ts';

let lab: LabProcess;
beforeAll(async () => {
  lab = await startLabServer('graceful', { POD_NAME: 'pod-a', POD_UID: 'uid-a' });
});
afterAll(async () => {
  lab.child.kill('SIGTERM');
  await lab.exited;
});

describe('lab server endpoints', () => {
  it.each([
    ['/work', 'ms'],
    ['/work?ms=abc', 'ms'],
    ['/work?ms=0', 'ms'],
    ['/work?ms=600001', 'ms'],
    ['/work?ms=1.5', 'ms'],
    ['/work?ms=10&id=bad%20id', 'id'],
    ['/hook/prestop?ms=-1', 'ms'],
  ])('answers %s with 400 naming %s', async (path, parameter) => {
    const res = await getJson(`${lab.base}${path}`);
    expect(res.status).toBe(400);
    expect(res.body.parameter).toBe(parameter);
    expect(String(res.body.error)).toContain(parameter);
  });

  it('digests the body it sent so a client can tell a whole body from a cut one', async () => {
    const res = await request(`${lab.base}/work?ms=600`);
    const text = await res.body.text();
    const lines = text.trimEnd().split('\n');
    const done = JSON.parse(lines.at(-1)!);
    const before = text.slice(0, text.length - lines.at(-1)!.length - 1);
    expect(done.bytes).toBe(Buffer.byteLength(before));
    const { createHash } = await import('node:crypto');
    expect(done.digest).toBe(createHash('sha256').update(before).digest('hex'));
  });

  it('reports its state and health', async () => {
    const state = await getJson(`${lab.base}/state`);
    expect(state.body).toMatchObject({ mode: 'graceful', draining: false, signalAt: null, pid: lab.child.pid });
    expect((await getJson(`${lab.base}/healthz`)).status).toBe(200);
    expect((await getJson(`${lab.base}/nope`)).status).toBe(404);
    // /work takes GET and POST (the load's LOAD_METHOD=POST); anything else is a 405 that says so.
    const put = await request(`${lab.base}/work?ms=5`, { method: 'PUT' });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, POST');
    await put.body.dump();
    const big = await request(`${lab.base}/work?ms=5`, { method: 'POST', body: 'x'.repeat(70_000) });
    expect(big.statusCode).toBe(413);
    expect(await big.body.json()).toMatchObject({ error: expect.stringContaining('70000 bytes') });
    const post = await request(`${lab.base}/state`, { method: 'POST' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
    await post.body.dump();
  });

  it('logs the httpGet hook start and end around its wait', async () => {
    const res = await getJson(`${lab.base}/hook/prestop?ms=300`);
    expect(res.status).toBe(200);
    const start = await lab.waitForEvent((e) => e.event === 'hook-start', 'hook-start');
    const end = await lab.waitForEvent((e) => e.event === 'hook-end', 'hook-end');
    expect(start).toMatchObject({ kind: 'httpGet', ms: 300, podName: 'pod-a', podUid: 'uid-a' });
    expect(end.mono - start.mono).toBeGreaterThanOrEqual(299);
  });

  it('writes every log line as JSON with ISO time and a monotonic offset that never goes back', async () => {
    const res = await request(`${lab.base}/work?ms=50`);
    await readLines(res.body);
    await lab.waitForEvent((e) => e.event === 'completed', 'completed');
    expect(lab.rawLines.length).toBe(lab.events.length);
    for (const [i, e] of lab.events.entries()) {
      expect(e.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      if (i > 0) expect(e.mono).toBeGreaterThanOrEqual(lab.events[i - 1]!.mono);
    }
    expect(lab.events[0]!.event).toBe('listening');
  });
});
