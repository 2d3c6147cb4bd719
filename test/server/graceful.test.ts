import { afterEach, describe, expect, it } from 'vitest';
import { Client, request } from 'undici';
import { getJson, readLines, startLabServer, type LabProcess } from '../support/labServer.ts';

let lab: LabProcess | undefined;
afterEach(() => { if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL'); });

describe('graceful mode', () => {
  it('finishes every accepted request on SIGTERM, refuses new work, turns unready and exits 0', async () => {
    lab = await startLabServer('graceful', { POD_UID: 'uid-1' });
    expect((await getJson(`${lab.base}/readyz`)).status).toBe(200);

    // Three in-flight requests; one on a pipelined connection so we can ask it questions after TERM.
    const pipelined = new Client(lab.base, { pipelining: 4 });
    const inflight = [0, 1, 2].map(async (i) => {
      const res = await request(`${lab!.base}/work?ms=2000&id=w${i}`, i === 0 ? { dispatcher: pipelined } : {});
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-request-id']).toBe(`w${i}`);
      expect(res.headers['x-pod-uid']).toBe('uid-1');
      return readLines(res.body);
    });
    for (const i of [0, 1, 2]) await lab.waitForEvent((e) => e.event === 'accepted' && e.id === `w${i}`, `accepted w${i}`);

    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');

    // A new connection is refused: the listener is closed.
    await expect(request(`${lab.base}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // On the open connection, new work is rejected and readiness is 503.
    const ready = request(`${lab.base}/readyz`, { dispatcher: pipelined });
    const late = request(`${lab.base}/work?ms=100&id=late`, { dispatcher: pipelined });

    const bodies = await Promise.all(inflight);
    for (const [i, body] of bodies.entries()) {
      expect(body.error).toBeNull();
      expect(body.lines[0]).toMatchObject({ event: 'accepted', id: `w${i}` });
      expect(body.lines.at(-1)).toMatchObject({ event: 'done', id: `w${i}` });
      expect(body.lines.filter((l) => l.event === 'progress').length).toBeGreaterThan(2);
    }
    expect((await ready).statusCode).toBe(503);
    const lateRes = await late;
    expect(lateRes.statusCode).toBe(503);
    expect(lateRes.headers.connection).toBe('close');
    expect(await lateRes.body.json()).toMatchObject({ event: 'rejected', id: 'late' });
    await pipelined.close().catch(() => {});

    expect(await lab.exited).toEqual({ code: 0, signal: null });
    const names = lab.events.map((e) => e.event);
    expect(names.filter((n) => n === 'completed')).toHaveLength(3);
    expect(names).toContain('rejected');
    expect(names.indexOf('signal')).toBeLessThan(names.indexOf('drained'));
    expect(names.at(-1)).toBe('exit');
    expect(lab.events.at(-1)).toMatchObject({ code: 0 });
  });

  it('exits 0 at once when TERM arrives with no work in flight', async () => {
    lab = await startLabServer('graceful');
    lab.child.kill('SIGINT');
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect(lab.events.map((e) => e.event)).toEqual(['listening', 'signal', 'draining', 'drained', 'exit']);
    expect(lab.events[1]).toMatchObject({ signal: 'SIGINT' });
  });

  it('is seen as signal death when SIGKILLed mid-request, the body cut', async () => {
    lab = await startLabServer('graceful');
    const res = await request(`${lab.base}/work?ms=5000`);
    const body = readLines(res.body);
    await lab.waitForEvent((e) => e.event === 'accepted', 'accepted');
    lab.child.kill('SIGKILL');
    expect(await lab.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const { lines, error } = await body;
    expect(error).not.toBeNull();
    expect(lines.some((l) => l.event === 'done')).toBe(false);
  });
});
