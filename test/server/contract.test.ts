// The pod contract (server/contract.ts, server/contract-schemas.ts): every hook kind rendered into
// the real template and parsed back, and every line the real server and hook write read through
// the one schema of its event.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderPodTemplate } from '../../harness/scenario/render-rollout.ts';
import { renderPod } from '../../harness/scenario/render.ts';
import { describePreStop, type PreStop, type Scenario } from '../../harness/scenario/schema.ts';
import { LAB_EVENT_NAMES, LAB_EXIT_CODES } from '../../server/contract.ts';
import {
  parseLabLine,
  parsePreStop,
  type PreStop as ContractPreStop,
  renderPreStop,
} from '../../server/contract-schemas.ts';
import { readLines, startLabServer, type LabProcess } from '../support/labServer.ts';
import { repoRoot } from '../support/processes.ts';

const template = parse(readFileSync(join(repoRoot, 'manifests/lab-pod.yaml'), 'utf8'));

// Every kind, and every optional field of a kind, at least once.
const EVERY_HOOK: PreStop[] = [
  { kind: 'none' },
  { kind: 'exec-sleep', seconds: 3 },
  { kind: 'exec-sleep', seconds: 0.25 },
  { kind: 'exec-fail' },
  { kind: 'sleep-action', seconds: 0 },
  { kind: 'sleep-action', seconds: 5 },
  { kind: 'httpGet', ms: 1000 },
  { kind: 'httpGet', ms: 0, port: 9 },
];

const scenarioWith = (preStop: PreStop): Scenario => ({
  name: 'contract',
  mode: 'graceful',
  preStop,
  terminationGracePeriodSeconds: 30,
  workMs: 5000,
  deleteDelayMs: 1000,
});

describe('the hook: rendered and parsed back', () => {
  it.each(EVERY_HOOK.map((h) => [describePreStop(h), h] as const))(
    '%s survives render → pod → parse',
    (_name, preStop) => {
      const pod = renderPod(template, scenarioWith(preStop), { podName: 'p', owner: 'o', runId: 'r' }) as any;
      expect(parsePreStop(pod.spec.containers[0].lifecycle?.preStop)).toEqual(preStop);
      const version = renderPodTemplate(
        template,
        { name: 'r', terminationGracePeriodSeconds: 30 } as never,
        { mode: 'graceful', preStop } as never,
        'from',
        { name: 'r', owner: 'o', runId: 'r' },
      );
      expect(parsePreStop(version.spec.containers[0].lifecycle?.preStop)).toEqual(preStop);
    },
  );

  it("a numbered server port is the server's own when the parse is told it, another port is the scenario's", () => {
    expect(parsePreStop(renderPreStop({ kind: 'httpGet', ms: 5 }, 8080), 8080)).toEqual({ kind: 'httpGet', ms: 5 });
    expect(parsePreStop(renderPreStop({ kind: 'httpGet', ms: 5, port: 9 }, 8080), 8080)).toEqual({
      kind: 'httpGet',
      ms: 5,
      port: 9,
    });
  });

  it.each([
    ['another program', { exec: { command: ['/bin/sleep', '3'] } }],
    ['lab-hook with an unknown command', { exec: { command: ['/usr/local/bin/lab-hook', 'nap', '3'] } }],
    ['lab-hook fail with an argument', { exec: { command: ['/usr/local/bin/lab-hook', 'fail', '3'] } }],
    ['a tcpSocket handler', { tcpSocket: { port: 8080 } }],
    ['two handlers', { sleep: { seconds: 1 }, exec: { command: ['/usr/local/bin/lab-hook', 'fail'] } }],
    ['an httpGet to another path', { httpGet: { path: '/other?ms=5', port: 'http' } }],
    ['a fractional sleep', { sleep: { seconds: 1.5 } }],
  ])('%s is named as a hook the lab does not render', (_name, handler) => {
    expect(parsePreStop(handler)).toMatch(/^a preStop hook the lab does not render/);
  });

  it('the scenario schema and the contract are the same type', () => {
    const same: ContractPreStop = EVERY_HOOK[1]!;
    expect(same.kind).toBe('exec-sleep');
  });
});

// --- the lines, from the real writers ---

function expectEveryLineTyped(lines: string[]): string[] {
  const events: string[] = [];
  for (const text of lines) {
    const parsed = parseLabLine(JSON.parse(text));
    expect(parsed, text).toMatchObject({ kind: 'event' });
    events.push((parsed as { event: string }).event);
  }
  return events;
}

let lab: LabProcess | undefined;
afterEach(() => {
  if (lab && lab.child.exitCode === null) lab.child.kill('SIGKILL');
});

function runHook(args: string[], log: string): Promise<number | null> {
  const child = spawn('/bin/sh', ['server/lab-hook.sh', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LAB_HOOK_LOG: log, POD_UID: 'uid-c', POD_NAME: 'pod-c' },
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

describe("the lines: every writer through its event's schema", () => {
  it("the exec hook's lines, sleep and fail", async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'termlab-contract-')), 'container.log');
    expect(await runHook(['sleep', '50'], log)).toBe(0);
    expect(await runHook(['fail'], log)).toBe(1);
    expect(expectEveryLineTyped(readFileSync(log, 'utf8').trimEnd().split('\n'))).toEqual([
      'hook-start',
      'hook-end',
      'hook-start',
    ]);
  });

  it('graceful: listening, the httpGet hook, a request, TERM twice, drain and exit', async () => {
    lab = await startLabServer('graceful', { LAB_TERM_ALLOCATE_MIB: '1' });
    const hook = await request(`${lab.base}/hook/prestop?ms=10`);
    await hook.body.text();
    const aborted = await request(`${lab.base}/work?ms=5000&id=gone`);
    await lab.waitForEvent((e) => e.event === 'accepted' && e.id === 'gone', 'accepted gone');
    aborted.body.destroy();
    await lab.waitForEvent((e) => e.event === 'aborted', 'aborted');
    const work = await request(`${lab.base}/work?ms=300&id=c1`);
    const body = readLines(work.body);
    await lab.waitForEvent((e) => e.event === 'accepted' && e.id === 'c1', 'accepted c1');
    lab.child.kill('SIGTERM');
    await lab.waitForEvent((e) => e.event === 'draining', 'draining');
    lab.child.kill('SIGTERM');
    const rejected = await request(`${lab.base}/work?ms=10&id=late`).catch(() => null);
    await rejected?.body.text();
    await body;
    expect(await lab.exited).toEqual({ code: 0, signal: null });
    const events = expectEveryLineTyped(lab.rawLines);
    for (const name of [
      'listening',
      'hook-start',
      'hook-end',
      'accepted',
      'aborted',
      'signal',
      'allocating',
      'draining',
      'completed',
      'drained',
      'exit',
    ])
      expect(events).toContain(name);
  });

  it("immediate: exits with the contract's code, every line typed", async () => {
    lab = await startLabServer('immediate');
    await lab.waitForEvent((e) => e.event === 'listening', 'listening');
    lab.child.kill('SIGTERM');
    expect(await lab.exited).toEqual({ code: LAB_EXIT_CODES.immediate, signal: null });
    expect(expectEveryLineTyped(lab.rawLines)).toEqual(['listening', 'signal', 'exit']);
  });

  it('a line missing a field its event has, or with a field of the wrong type, is malformed, naming the field', () => {
    const stamp = { time: '2026-01-01T00:00:00.000Z', mono: 1 };
    expect(parseLabLine({ event: 'hook-start', ...stamp, kind: 'exec' })).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('field ms'),
    });
    expect(parseLabLine({ event: 'hook-start', ...stamp, kind: 'exec', ms: 5, fail: true })).toMatchObject({
      kind: 'malformed',
    });
    expect(parseLabLine({ event: 'hook-end', ...stamp, kind: 'tcp', ms: 5 })).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('field kind'),
    });
    expect(parseLabLine({ event: 'note', ...stamp, pid: 'x' })).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('field pid'),
    });
    expect(parseLabLine({ event: 'note', text: 'no clock' })).toEqual({ kind: 'none' });
    expect(LAB_EVENT_NAMES.length).toBe(new Set(LAB_EVENT_NAMES).size);
  });
});
