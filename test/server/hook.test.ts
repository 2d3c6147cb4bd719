// The exec hook script (server/lab-hook.sh), run as a kubelet runs it: a real /bin/sh process.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const HOOK = 'server/lab-hook.sh';

function runHook(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn('/bin/sh', [HOOK, ...args], {
    env: { ...process.env, POD_UID: '', POD_NAME: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { exited, stderr: () => stderr };
}

const tempLog = () => join(mkdtempSync(join(tmpdir(), 'termlab-hook-')), 'container.log');
const readEvents = (log: string) =>
  readFileSync(log, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('lab-hook (POSIX shell)', () => {
  it("appends hook-start and hook-end to the container log, in the lab server's JSON shape", async () => {
    const log = tempLog();
    const hook = runHook(['sleep', '0200'], { LAB_HOOK_LOG: log, POD_UID: 'uid-h', POD_NAME: 'pod-h' });
    expect(await hook.exited).toBe(0);
    const events = readEvents(log);
    expect(events.map((e) => e.event)).toEqual(['hook-start', 'hook-end']);
    const hasProc = existsSync('/proc/uptime');
    expect(Object.keys(events[0])).toEqual([
      'event',
      'time',
      'mono',
      'pid',
      'podUid',
      'podName',
      'kind',
      'ms',
      ...(hasProc ? ['procAgeMs'] : []),
    ]);
    // Its own age at the first line, in /proc's 10 ms ticks; not measured where there is no /proc.
    if (hasProc) expect(events[0].procAgeMs % 10 === 0 && events[0].procAgeMs >= 0).toBe(true);
    expect(events[0]).toMatchObject({ kind: 'exec', ms: 200, podUid: 'uid-h', podName: 'pod-h', mono: 0 });
    for (const e of events) expect(e.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(events[1].time) - Date.parse(events[0].time)).toBeGreaterThanOrEqual(200);
    expect(events[1].mono).toBe(Date.parse(events[1].time) - Date.parse(events[0].time));
  });

  it('reads the clock through perl where date has no %N (BSD date, as on macOS)', async () => {
    // A date that prints %N as "N", the way BSD date does.
    const bin = mkdtempSync(join(tmpdir(), 'termlab-bsd-date-'));
    writeFileSync(join(bin, 'date'), `#!/bin/sh\n${spawnSyncPath('date')} "$@" | sed 's/ [0-9]*$/ N/'\n`);
    chmodSync(join(bin, 'date'), 0o755);
    const log = tempLog();
    const hook = runHook(['sleep', '100'], { LAB_HOOK_LOG: log, PATH: `${bin}:${process.env.PATH}` });
    expect(await hook.exited).toBe(0);
    const events = readEvents(log);
    expect(events.map((e) => e.event)).toEqual(['hook-start', 'hook-end']);
    expect(Date.parse(events[1].time) - Date.parse(events[0].time)).toBeGreaterThanOrEqual(100);
    expect(events.some((e) => !e.time.endsWith('.000Z'))).toBe(true);
  });

  it('logs hook-start and fails at once with fail', async () => {
    const log = tempLog();
    const hook = runHook(['fail'], { LAB_HOOK_LOG: log });
    expect(await hook.exited).toBe(1);
    expect(readEvents(log).map((e) => [e.event, e.fail])).toEqual([['hook-start', true]]);
    expect(hook.stderr()).toContain('failing at once');
  });

  it('still sleeps, and says why, when the container log cannot be opened', async () => {
    const started = performance.now();
    const hook = runHook(['sleep', '150'], { LAB_HOOK_LOG: '/nonexistent/dir/log' });
    expect(await hook.exited).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(hook.stderr()).toContain('cannot append to the container log /nonexistent/dir/log');
  });

  it.each([
    [['nap', '5'], 'unknown command'],
    [['sleep', '1.5'], 'whole number'],
    [['sleep', '600001'], 'between 0 and 600000'],
  ])('rejects %j with exit 2 and a usage line', async (args, message) => {
    const hook = runHook(args, { LAB_HOOK_LOG: '/dev/null' });
    expect(await hook.exited).toBe(2);
    expect(hook.stderr()).toContain(message);
    expect(hook.stderr()).toContain('usage: lab-hook sleep <ms> | lab-hook fail');
  });
});

function spawnSyncPath(program: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    try {
      readFileSync(join(dir, program));
      return join(dir, program);
    } catch {
      /* next */
    }
  }
  throw new Error(`${program} not on PATH`);
}
