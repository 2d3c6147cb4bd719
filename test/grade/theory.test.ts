import { describe, expect, it } from 'vitest';
import { predict } from '../../harness/grade/theory.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

const base: Scenario = {
  name: 's',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 3 },
  terminationGracePeriodSeconds: 30,
  workMs: 10_000,
  deleteDelayMs: 1_000,
};

describe('kubelet model', () => {
  it.each([
    ['hook 3s, grace 30s: completes', base, 'completed', 0, 3, 30],
    [
      'hook 3s, grace 5s: the hook eats 3s, TERM at 3, KILL at 5',
      { ...base, terminationGracePeriodSeconds: 5 },
      'cut',
      137,
      3,
      5,
    ],
    ['hook 3s, grace 15s: the grace restored', { ...base, terminationGracePeriodSeconds: 15 }, 'completed', 0, 3, 15],
    ['immediate mode exits 17 at TERM', { ...base, mode: 'immediate' as const }, 'cut', 17, 3, 30],
    ['no hook, grace 30s', { ...base, preStop: { kind: 'none' as const } }, 'completed', 0, 0, 30],
    [
      'hook 10s longer than grace 5s: TERM at 5, the 2s minimum, KILL at 7',
      { ...base, preStop: { kind: 'exec-sleep' as const, seconds: 10 }, terminationGracePeriodSeconds: 5 },
      'cut',
      137,
      5,
      7,
    ],
    [
      'hook 4.9s, grace 5s: whole seconds truncated, remainder 1 raised to 2',
      { ...base, preStop: { kind: 'httpGet' as const, ms: 4900 }, terminationGracePeriodSeconds: 5 },
      'cut',
      137,
      4.9,
      6.9,
    ],
    [
      'ignore-term, no hook, grace 8s, 3s of work: the work completes, but only SIGKILL ends the server',
      {
        ...base,
        mode: 'ignore-term' as const,
        preStop: { kind: 'none' as const },
        terminationGracePeriodSeconds: 8,
        workMs: 3_000,
      },
      'completed',
      137,
      0,
      8,
    ],
    [
      'ignore-term, work past the kill: cut, 137',
      { ...base, mode: 'ignore-term' as const, terminationGracePeriodSeconds: 5 },
      'cut',
      137,
      3,
      5,
    ],
    [
      'grace 0 becomes 1, raised to the 2s minimum',
      { ...base, preStop: { kind: 'none' as const }, terminationGracePeriodSeconds: 0 },
      'cut',
      137,
      0,
      2,
    ],
  ] as const)('%s', (_title, scenario, outcome, exitCode, termAt, killAt) => {
    const p = predict(scenario);
    expect(p).toMatchObject({ outcome, exitCode });
    expect(p.termAt).toBeCloseTo(termAt, 6);
    expect(p.killAt).toBeCloseTo(killAt, 6);
  });

  it('ignore-term exits at the kill, not when its work ends', () => {
    const p = predict({
      ...base,
      mode: 'ignore-term',
      preStop: { kind: 'none' },
      terminationGracePeriodSeconds: 8,
      workMs: 3_000,
    });
    expect(p).toMatchObject({ exitAt: 8, reason: 'Error', marginSeconds: 6 });
  });

  it('an httpGet hook longer than the grace holds a draining server open: its work completes, the kill ends it', () => {
    const p = predict({
      ...base,
      preStop: { kind: 'httpGet', ms: 9_000 },
      terminationGracePeriodSeconds: 3,
      workMs: 2_000,
      deleteDelayMs: 500,
    });
    expect(p).toMatchObject({
      outcome: 'completed',
      exitCode: 137,
      termAt: 3,
      killAt: 5,
      exitAt: 5,
      marginSeconds: 3.5,
    });
    // Ending before the kill, the hook's answer lets the server exit 0 when it is out.
    expect(
      predict({ ...base, preStop: { kind: 'httpGet', ms: 4_000 }, terminationGracePeriodSeconds: 3, workMs: 2_000 }),
    ).toMatchObject({ exitCode: 0, exitAt: 4 });
    // An exec hook is no request to the server: it drains and exits at TERM.
    expect(
      predict({
        ...base,
        preStop: { kind: 'exec-sleep', seconds: 9 },
        terminationGracePeriodSeconds: 3,
        workMs: 2_000,
      }),
    ).toMatchObject({ exitCode: 0, exitAt: 3 });
  });

  it('uses the deletion grace over the spec grace', () => {
    // 4s of grace, 3 taken by the hook, the remaining 1 raised to 2: KILL at 5.
    expect(predict(base, 4)).toMatchObject({ graceSeconds: 4, killAt: 5, outcome: 'cut' });
  });

  it('exits at TERM when the work finished during the hook', () => {
    const p = predict({ ...base, preStop: { kind: 'sleep-action', seconds: 10 }, workMs: 3_000 });
    expect(p).toMatchObject({ outcome: 'completed', exitCode: 0, exitAt: 10 });
  });
});

describe('the active deadline (active_deadline.go)', () => {
  const deadline: Scenario = {
    name: 'd',
    mode: 'graceful',
    preStop: { kind: 'none' },
    terminationGracePeriodSeconds: 2,
    activeDeadlineSeconds: 8,
    workMs: 30_000,
    deleteDelayMs: 20_000,
  };

  it("a deadline that passes before the delete starts the kill, with the pod's own grace: Failed, DeadlineExceeded, 137", () => {
    // No run places it: at the latest 8 s after the acceptance, 12 s before the delete.
    const p = predict(deadline);
    expect(p).toMatchObject({
      cause: 'deadline',
      deadlineAt: -12,
      graceSeconds: 2,
      termAt: -12,
      killAt: -10,
      outcome: 'cut',
      exitCode: 137,
      reason: 'Error',
    });
    expect(p.podStatus).toEqual({
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
    });
    expect(p.steps[0]).toMatch(
      /activeDeadlineSeconds 8s passes at most 8s after the request's acceptance, 12s before the delete/,
    );
  });

  it('placed by a run, the kill follows the deadline; the delete on the finished pod (grace 0) changes nothing', () => {
    const p = predict(deadline, 0, undefined, null, { seconds: 8, passesAt: -13.4 });
    expect(p).toMatchObject({ cause: 'deadline', graceSeconds: 2, outcome: 'cut', exitCode: 137, basis: 'window' });
    expect(p.termAt).toBeCloseTo(-13.4, 6);
    expect(p.killAt).toBeCloseTo(-11.4, 6);
  });

  it('work that ends before a deadline no run placed cannot be called: the pod may have started any time before', () => {
    const p = predict({ ...deadline, workMs: 9_000, terminationGracePeriodSeconds: 5, deleteDelayMs: 20_000 });
    expect(p).toMatchObject({ cause: 'deadline', outcome: 'completed', exitCode: 0, marginSeconds: 0 });
  });

  it("a deadline after the delete, or within the kubelet's reaction before it, leaves the kill to the delete", () => {
    expect(predict({ ...deadline, activeDeadlineSeconds: 30 })).toMatchObject({
      cause: 'delete',
      deadlineAt: null,
      termAt: 0,
      podStatus: { phase: 'Failed', reason: null },
    });
    expect(predict(deadline, 2, undefined, null, { seconds: 8, passesAt: -1.5 })).toMatchObject({
      cause: 'delete',
      termAt: 0,
    });
    // Unless the kubelet is seen to have begun before the delete.
    const observed = { termAt: -0.4, startNotBefore: -1.5, startNotAfter: null, hookRequestStartAt: null };
    expect(predict(deadline, 2, undefined, observed, { seconds: 8, passesAt: -1.5 })).toMatchObject({
      cause: 'deadline',
      basis: 'observed',
    });
  });
});

describe('a memory limit the allocation on TERM crosses', () => {
  const oom: Scenario = {
    name: 'o',
    mode: 'graceful',
    preStop: { kind: 'none' },
    terminationGracePeriodSeconds: 10,
    memoryLimitMiB: 192,
    termAllocateMiB: 512,
    workMs: 10_000,
    deleteDelayMs: 1_000,
  };

  it('the kernel kills it for memory by the time the allocation alone reaches the limit: cut, 137 OOMKilled', () => {
    // 192 MiB at 64 MiB/s: 3 s after TERM, long before the kill at 10 s.
    expect(predict(oom)).toMatchObject({
      outcome: 'cut',
      exitCode: 137,
      reason: 'OOMKilled',
      termAt: 0,
      exitAt: 3,
      killAt: 10,
      marginSeconds: 4,
    });
  });

  it('an allocation under the limit, or none, changes nothing; nor does immediate mode, which leaves at TERM', () => {
    expect(predict({ ...oom, termAllocateMiB: 100 })).toMatchObject({
      outcome: 'completed',
      exitCode: 0,
      reason: 'Completed',
    });
    expect(predict({ ...oom, mode: 'immediate' })).toMatchObject({ exitCode: 17 });
  });

  it('a kill that comes before the allocation surely reaches the limit is too close to call', () => {
    expect(predict({ ...oom, terminationGracePeriodSeconds: 2, workMs: 30_000 })).toMatchObject({
      reason: 'OOMKilled',
      marginSeconds: 0,
    });
  });
});
