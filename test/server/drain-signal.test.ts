// LAB_DRAIN_SIGNAL: a server that drains only on the named signal and takes TERM as its fast stop (nginx's
// QUIT and TERM, the story of KEP-4960's lifecycle.stopSignal). Real processes, real signals.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { spawnTs } from '../support/processes.ts';
import { readLines, startLabServer, type LabProcess } from '../support/labServer.ts';

let lab: LabProcess | undefined;
afterEach(() => {
  if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL');
});

/** One /work request under way (its accepted line seen), and its body as it ends (wrapped: an async function would wait for it). */
async function workUnderWay(server: LabProcess, id: string, ms: number) {
  const res = await request(`${server.base}/work?ms=${ms}&id=${id}`);
  const body = readLines(res.body);
  await server.waitForEvent((e) => e.event === 'accepted' && e.id === id, `accepted ${id}`);
  return { body };
}

describe('LAB_DRAIN_SIGNAL=SIGQUIT', () => {
  it('drains on SIGQUIT: the work under way completes, new work is refused, exit 0', async () => {
    lab = await startLabServer('graceful', { LAB_DRAIN_SIGNAL: 'SIGQUIT' });
    expect(lab.events[0]).toMatchObject({ event: 'listening', drainSignal: 'SIGQUIT' });
    const { body } = await workUnderWay(lab, 'w1', 1500);
    lab.child.kill('SIGQUIT');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    const { lines, error } = await body;
    expect(error).toBeNull();
    expect(lines.at(-1)).toMatchObject({ event: 'done' });
    expect(lab.events.map((e) => e.event)).toEqual([
      'listening',
      'accepted',
      'signal',
      'draining',
      'completed',
      'drained',
      'exit',
    ]);
    expect(lab.events.find((e) => e.event === 'signal')).toMatchObject({ signal: 'SIGQUIT' });
  });

  it('exits 17 at once on SIGTERM (its fast stop), cutting the work under way', async () => {
    lab = await startLabServer('graceful', { LAB_DRAIN_SIGNAL: 'SIGQUIT' });
    const { body } = await workUnderWay(lab, 'cut', 5000);
    lab.child.kill('SIGTERM');
    expect(await lab.exited).toEqual({ code: 17, signal: null });
    const { lines, error } = await body;
    expect(lines.some((l) => l.event === 'done')).toBe(false);
    expect(error).not.toBeNull();
    expect(lab.events.map((e) => e.event)).toEqual(['listening', 'accepted', 'signal', 'exit']);
    expect(lab.events.at(-1)).toMatchObject({ event: 'exit', code: 17 });
  });

  it('a SIGTERM while it drains still stops it at once with 17', async () => {
    lab = await startLabServer('graceful', { LAB_DRAIN_SIGNAL: 'SIGQUIT' });
    const { body } = await workUnderWay(lab, 'long', 10_000);
    lab.child.kill('SIGQUIT');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    lab.child.kill('SIGTERM');
    expect(await lab.exited).toEqual({ code: 17, signal: null });
    expect((await body).lines.some((l) => l.event === 'done')).toBe(false);
    expect(lab.events.filter((e) => e.event === 'signal').map((e) => e.signal)).toEqual(['SIGQUIT', 'SIGTERM']);
  });

  it('--drain-signal sets it too, over the environment', async () => {
    const proc = spawnTs('server/main.ts', ['--port', '0', '--host', '127.0.0.1', '--drain-signal', 'SIGUSR2'], {
      LAB_MODE: 'graceful',
      LAB_DRAIN_SIGNAL: 'SIGQUIT',
    });
    lab = { ...proc, port: 0, base: '' };
    await proc.waitForEvent((e) => e.event === 'listening', 'listening');
    expect(proc.events[0]).toMatchObject({ drainSignal: 'SIGUSR2' });
    proc.child.kill('SIGUSR2');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });
});

describe('the default drain signal (SIGTERM)', () => {
  it('drains on SIGINT as on SIGTERM, as before', async () => {
    lab = await startLabServer('graceful');
    expect(lab.events[0]).toMatchObject({ drainSignal: 'SIGTERM' });
    const { body } = await workUnderWay(lab, 'w', 1000);
    lab.child.kill('SIGINT');
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    expect((await body).lines.at(-1)).toMatchObject({ event: 'done' });
  });
});

describe('a bad drain signal', () => {
  it.each([
    [{ LAB_DRAIN_SIGNAL: 'SIGFOO' }, [], '"SIGFOO"'],
    [{}, ['--drain-signal', 'QUIT'], '"QUIT"'],
  ])('is refused with one line naming the setting, exit 2 (%o %o)', async (env, args, shown) => {
    const proc = spawnTs('server/main.ts', ['--port', '0', ...args], { LAB_MODE: 'graceful', ...env });
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr()).toContain('LAB_DRAIN_SIGNAL/--drain-signal: expected one of SIGTERM, SIGQUIT');
    expect(proc.stderr()).toContain(shown);
    expect(proc.events).toEqual([]);
  });
});
