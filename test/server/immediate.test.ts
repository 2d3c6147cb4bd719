import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { readLines, startLabServer, type LabProcess } from '../support/labServer.ts';

let lab: LabProcess | undefined;
afterEach(() => {
  if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL');
});

describe('immediate mode', () => {
  it('exits 17 on SIGTERM and cuts the in-flight request', async () => {
    lab = await startLabServer('immediate');
    const res = await request(`${lab.base}/work?ms=5000&id=cut-me`);
    const body = readLines(res.body);
    await lab.waitForEvent((e) => e.event === 'accepted', 'accepted');
    lab.child.kill('SIGTERM');
    expect(await lab.exited).toEqual({ code: 17, signal: null });
    const { lines, error } = await body;
    expect(lines[0]).toMatchObject({ event: 'accepted', id: 'cut-me' });
    expect(lines.some((l) => l.event === 'done')).toBe(false);
    expect(error).not.toBeNull();
    expect(lab.events.map((e) => e.event)).toEqual(['listening', 'accepted', 'signal', 'exit']);
    expect(lab.events.at(-1)).toMatchObject({ code: 17 });
  });
});
