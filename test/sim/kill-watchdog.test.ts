// The SIGKILL at the end of the grace must not wait for this process's event loop: a starved loop
// (many pods, a loaded machine) fired the in-process timer 0.31 s late. Here the loop is blocked
// outright for the whole grace, so only the watchdog process can kill the container in time.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { killContainer, killWatchdog } from '../../cluster/sim/kill.ts';
import { ContainerProcess } from '../../cluster/sim/runtime.ts';
import type { TruthRecord } from '../../cluster/sim/truth.ts';

const GRACE_SECONDS = 2;

describe('simulated kubelet: the kill at the end of the grace', () => {
  it('kills a container that ignores TERM while the event loop is blocked', async () => {
    // Ignores TERM and would run for a minute.
    const container = new ContainerProcess(
      [process.execPath, '-e', "process.on('SIGTERM', () => {}); setTimeout(() => {}, 60000); console.log('up')"],
      { PATH: process.env.PATH ?? '' },
    );
    await new Promise<void>((resolve) => {
      const stop = container.follow((line) => {
        if (line?.text === 'up') {
          stop();
          resolve();
        }
      });
    });
    const truth: TruthRecord = {} as TruthRecord;
    const killed = killContainer(
      {
        containerName: 'lab',
        container,
        lifecycle: undefined,
        portTarget: () => undefined,
        env: {},
        image: { entrypoint: [], paths: {}, env: {} },
        truth,
        stopSignal: 'SIGTERM',
        ignoreSigterm: false,
        recordEvent: () => {},
      },
      GRACE_SECONDS,
    );
    // Blocks this event loop until the container is dead (a zombie: its parent, this process, cannot reap
    // it yet) or the grace plus 5 s pass. With only the in-process timer it would never die in here.
    const pid = container.pid!;
    const waited = spawnSync(
      '/bin/sh',
      ['-c', `while :; do s=$(ps -o stat= -p ${pid}); case "$s" in Z*|'') exit 0;; esac; sleep 0.05; done`],
      { timeout: (GRACE_SECONDS + 5) * 1000 },
    );
    expect(waited.status).toBe(0);
    await killed;
    const exit = await container.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(truth.killSentAt).toBe(truth.termSentAt! + GRACE_SECONDS * 1000);
  });
});

describe('simulated kubelet: a watchdog cancelled when the container ends in time', () => {
  it('ends at once, sleep and all, and kills nothing', async () => {
    // A process of our own to aim at, which must survive the cancelled watchdog.
    const target = new ContainerProcess(['/bin/sleep', '60'], { PATH: process.env.PATH ?? '' });
    try {
      const dog = killWatchdog(target.pid!, Date.now() + 60_000);
      dog.cancel();
      // 'close' comes once every holder of the watchdog's stdout is gone: before the fix, its sleep held
      // it for the whole minute and this timed out.
      expect(await dog.killed).toBe(false);
      expect(target.hasExited).toBe(false);
    } finally {
      target.signal('SIGKILL');
      await target.exited;
    }
  });
});
