// The load mode (LAB_MODE=load) against a real lab server process: real sockets, real signals.
import { afterEach, describe, expect, it } from 'vitest';
import { startLabServer } from '../support/labServer.ts';
import { spawnTs, type EventedProcess } from '../support/processes.ts';

const running: EventedProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

function startLoad(target: string, env: Record<string, string> = {}): EventedProcess {
  const proc = spawnTs('server/main.ts', [], {
    LAB_MODE: 'load',
    LOAD_TARGET: target,
    LOAD_RATE: '100',
    LOAD_WORK_MS: '20',
    LOAD_DURATION_MS: '500',
    LOAD_CONNECTIONS: '8',
    ...env,
  });
  running.push(proc);
  return proc;
}

describe('load mode', () => {
  it('sends a steady rate through a bounded pool and records each request with the pod that answered', async () => {
    const lab = await startLabServer('graceful', { POD_UID: 'uid-under-load' });
    running.push(lab);
    const load = startLoad(lab.base);
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = load.events.filter((e) => e.event === 'request');
    expect(requests).toHaveLength(50);
    expect(requests.every((r) => r.outcome === 'completed' && r.podUid === 'uid-under-load' && r.status === 200)).toBe(
      true,
    );
    expect(load.events.at(-1)).toMatchObject({ event: 'load-end', sent: 50, completed: 50, failed: 0 });
    // The server saw the same ids complete.
    await lab.waitForEvent((e) => e.event === 'completed' && e.id === 'L50', 'the last request completed');
    const completed = new Set(lab.events.filter((e) => e.event === 'completed').map((e) => e.id));
    for (const r of requests) expect(completed.has(r.id)).toBe(true);
  });

  it('records a refused connection with its code and still exits 0', async () => {
    const lab = await startLabServer('graceful');
    running.push(lab);
    lab.child.kill('SIGTERM');
    await lab.exited;
    const load = startLoad(lab.base, { LOAD_DURATION_MS: '100', LOAD_RATE: '20' });
    expect((await load.exited).code).toBe(0);
    const requests = load.events.filter((e) => e.event === 'request');
    expect(requests.length).toBeGreaterThan(0);
    expect(
      requests.every(
        (r) =>
          r.outcome === 'failed' && r.errorCode === 'ECONNREFUSED' && r.stage === 'connect' && r.headersAt === null,
      ),
    ).toBe(true);
  });

  it("after the server's TERM no new request is accepted (refused, or reset in the listener's backlog) while the requests in flight complete", async () => {
    const lab = await startLabServer('graceful', { POD_UID: 'draining-pod' });
    running.push(lab);
    const load = startLoad(lab.base, { LOAD_WORK_MS: '400', LOAD_DURATION_MS: '2000', LOAD_RATE: '20' });
    await lab.waitForEvent((e) => e.event === 'accepted', 'a first request accepted');
    lab.child.kill('SIGTERM');
    expect((await load.exited).code).toBe(0);
    const requests = load.events.filter((e) => e.event === 'request');
    const failed = requests.filter((r) => r.outcome !== 'completed');
    expect(requests.some((r) => r.outcome === 'completed')).toBe(true);
    expect(failed.length).toBeGreaterThan(0);
    // Every request the server accepted completed. A failure is one the server never accepted: refused,
    // or reset when its connect raced the listener's close (the kernel resets what its backlog held).
    const accepted = new Set(lab.events.filter((e) => e.event === 'accepted').map((e) => e.id));
    for (const r of requests) if (accepted.has(r.id)) expect(r).toMatchObject({ outcome: 'completed' });
    for (const r of failed) {
      if (r.outcome === 'rejected') continue;
      expect(accepted.has(r.id)).toBe(false);
      expect(r).toMatchObject({ outcome: 'failed', headersAt: null });
      expect(['ECONNREFUSED', 'ECONNRESET']).toContain(r.errorCode);
    }
    // The last line's counts are the request lines' own (counted as they end, nothing kept).
    const count = (o: string) => requests.filter((r) => r.outcome === o).length;
    expect(load.events.at(-1)).toMatchObject({
      event: 'load-end',
      sent: requests.length,
      completed: count('completed'),
      rejected: count('rejected'),
      failed: failed.length,
    });
  });

  it('a SIGTERM to the load pod stops the sending; what is in flight is still recorded and it exits 0', async () => {
    const lab = await startLabServer('graceful');
    running.push(lab);
    const load = startLoad(lab.base, { LOAD_WORK_MS: '200', LOAD_DURATION_MS: '60000', LOAD_RATE: '20' });
    await load.waitForEvent((e) => e.event === 'request', 'a first request');
    load.child.kill('SIGTERM');
    expect((await load.exited).code).toBe(0);
    const end = load.events.at(-1)!;
    expect(end).toMatchObject({ event: 'load-end', stopped: true });
    expect(end.sent).toBe(load.events.filter((e) => e.event === 'request').length);
  });

  it('rejects a bad setting with a message naming it', async () => {
    const load = startLoad('not a url');
    expect((await load.exited).code).toBe(2);
    expect(load.stderr()).toContain('LOAD_TARGET');
    const rate = startLoad('http://127.0.0.1:1', { LOAD_RATE: 'fast' });
    expect((await rate.exited).code).toBe(2);
    expect(rate.stderr()).toContain('LOAD_RATE');
  });
});
