// The load generator's own pool (server/load.ts): a request due while every connection is busy waits
// unsent, and its time limit starts when it is sent. Under a starved machine the old generator
// queued it inside the http Agent with its limit already running, so requests that never left the
// load pod were recorded as timed out and verify charged them to the app (bench:verify: 1421 of
// 3857 "failed", ETIMEDOUT at connect). Real processes and sockets; one connection, 2 s requests,
// a limit of 10 s past the declared 1 ms of work: the last of six waits 10 s before it is sent.
import { afterEach, describe, expect, it } from 'vitest';
import { startLabServer } from '../support/labServer.ts';
import { spawnTs, type EventedProcess } from '../support/processes.ts';

const running: EventedProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

describe('load mode: requests waiting for a connection', () => {
  it('are sent as connections free up, each within its own time limit, none failed by the wait', async () => {
    const lab = await startLabServer('graceful', { POD_UID: 'pool-pod' });
    running.push(lab);
    const load = spawnTs('server/main.ts', [], {
      LAB_MODE: 'load',
      LOAD_TARGET: lab.base,
      LOAD_PATH: '/work?ms=2000',
      LOAD_WORK_MS: '1',
      LOAD_RATE: '10',
      LOAD_DURATION_MS: '600',
      LOAD_CONNECTIONS: '1',
    });
    running.push(load);
    expect(await load.exited).toEqual({ code: 0, signal: null });
    const requests = load.events.filter((e) => e.event === 'request') as Record<string, any>[];
    expect(requests.map((r) => `${r.id} ${r.outcome} ${r.errorCode}`)).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => `L${n} completed null`),
    );
    for (let i = 1; i < requests.length; i++) {
      // One connection: each is sent only once the one before it has ended, though it was due long before.
      expect(requests[i]!.sent.mono).toBeGreaterThanOrEqual(requests[i - 1]!.ended.mono);
      expect(requests[i]!.dueMono).toBeLessThan(requests[i - 1]!.ended.mono);
    }
    const end = load.events.at(-1)!;
    expect(end).toMatchObject({ event: 'load-end', sent: 6, completed: 6, failed: 0, unsent: 0 });
    // The wait is kept: the last was sent later than due by the five 2 s requests before it, less its due offset.
    expect(end.waitedMaxMs).toBe(Math.round(requests[5]!.sent.mono - requests[5]!.dueMono));
  }, 60_000);

  it('when the sending stops, those still waiting are not sent and are counted as unsent, not failed', async () => {
    const lab = await startLabServer('graceful');
    running.push(lab);
    const load = spawnTs('server/main.ts', [], {
      LAB_MODE: 'load',
      LOAD_TARGET: lab.base,
      LOAD_PATH: '/work?ms=1500',
      LOAD_WORK_MS: '1500',
      LOAD_RATE: '20',
      LOAD_DURATION_MS: '60000',
      LOAD_CONNECTIONS: '1',
    });
    running.push(load);
    // The first takes 1.5 s on the one connection; by its end some 30 more are due and wait.
    await load.waitForEvent((e) => e.event === 'request', 'the first request ended');
    load.child.kill('SIGTERM');
    expect((await load.exited).code).toBe(0);
    const requests = load.events.filter((e) => e.event === 'request');
    const end = load.events.at(-1)!;
    // The one sent when the first ended is in flight at TERM and still completes; the rest were never sent.
    expect(requests.every((r) => r.outcome === 'completed')).toBe(true);
    expect(end).toMatchObject({
      event: 'load-end',
      sent: requests.length,
      completed: requests.length,
      failed: 0,
      stopped: true,
    });
    expect(end.unsent).toBeGreaterThan(0);
  }, 60_000);
});
