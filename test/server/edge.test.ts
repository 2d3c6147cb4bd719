// Edge-case behaviours the fidelity matrix needs: a server that ignores SIGTERM, and one that
// allocates memory on it (killed for memory under a limit).
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { getJson, startLabServer, type LabProcess } from '../support/labServer.ts';
import { spawnTs } from '../support/processes.ts';

let lab: LabProcess | undefined;
afterEach(() => {
  if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL');
});

describe('ignore-term mode', () => {
  it('logs SIGTERM, keeps serving and ready, and ends only by SIGKILL', async () => {
    lab = await startLabServer('ignore-term');
    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'signal', 'signal');
    const res = await request(`${lab.base}/work?ms=1`);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect((await getJson(`${lab.base}/readyz`)).status).toBe(200);
    lab.child.kill('SIGKILL');
    expect(await lab.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(lab.events.map((e) => e.event)).not.toContain('draining');
  });
});

describe('LAB_TERM_ALLOCATE_MIB', () => {
  it('allocates the memory on the signal, then drains as its mode says', async () => {
    lab = await startLabServer('graceful', { LAB_TERM_ALLOCATE_MIB: '8' });
    lab.child.kill('SIGTERM');
    expect((await lab.waitForEvent((e) => e.event === 'allocating', 'allocating')).mib).toBe(8);
    expect(await lab.exited).toEqual({ code: 0, signal: null });
  });

  it('rejects a bad amount with one line naming the variable, exit 2', async () => {
    const proc = spawnTs('server/main.ts', ['--port', '0'], { LAB_TERM_ALLOCATE_MIB: 'lots' });
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr()).toContain('LAB_TERM_ALLOCATE_MIB');
  });
});
