// The simulated OOM killer reads resident sizes from /proc (Linux) or ps (macOS); both readers run
// here, so the macOS path is not dead code on Linux.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { OomKiller, readRssFromProc, readRssWithPs, type RssReader } from '../../cluster/sim/memory.ts';

const MIB = 1024 * 1024;

/** A node process that holds `mib` MiB of touched memory, then says so on stdout. */
async function holding(mib: number) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const held = []; for (let i = 0; i < ${mib}; i++) held.push(Buffer.alloc(${MIB}, 1)); console.log('held'); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout!, 'data');
  return child;
}

const readers: { name: string; read: RssReader }[] = [
  { name: 'ps', read: readRssWithPs },
  ...(process.platform === 'linux' ? [{ name: '/proc', read: readRssFromProc }] : []),
];

describe.each(readers)('resident size from $name', ({ read }) => {
  it('reports a process holding 64 MiB as at least that, and leaves out a pid that is gone', async () => {
    const child = await holding(64);
    try {
      const sizes = await read([child.pid!, 999_999_999]);
      expect(sizes.get(child.pid!)! * 1024).toBeGreaterThanOrEqual(64 * MIB);
      expect(sizes.has(999_999_999)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('kills a process over its limit, once, and spares one under it', async () => {
    const [over, under] = await Promise.all([holding(96), holding(8)]);
    const killed: number[] = [];
    const killer = new OomKiller({ read, intervalMs: 20 });
    const overExit = once(over, 'exit');
    killer.watch({
      pid: over.pid!,
      limitBytes: 80 * MIB,
      kill: () => {
        killed.push(over.pid!);
        over.kill('SIGKILL');
      },
    });
    killer.watch({
      pid: under.pid!,
      limitBytes: 80 * MIB,
      kill: () => {
        killed.push(under.pid!);
      },
    });
    await overExit;
    killer.stop();
    under.kill('SIGKILL');
    expect(killed).toEqual([over.pid]);
  });
});
