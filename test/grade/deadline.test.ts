// The active deadline and the memory limit, graded from recordings of manifests/fidelity-edge.yaml on
// the simulated cluster (Kubernetes 1.37): each matches the model, and every hand edit of the status
// that says what ended the pod is caught.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { safetyNetEnded } from '../../harness/grade/deadline.ts';
import { factsOf } from '../../harness/grade/facts.ts';
import { grade } from '../../harness/grade/grade.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { repoRoot } from '../support/processes.ts';

const dir = join(repoRoot, 'test', 'grade', 'fixtures', 'deadline');
const raw = (name: string) =>
  JSON.parse(readFileSync(join(dir, `${name}.observation.json`), 'utf8')) as Record<string, any>;
const load = (name: string): Observation => parseObservationFile(raw(name), name).observation;
const check = (o: Observation, id: string) => grade(o).checks.find((c) => c.id === id)!;
const terminal = (o: Observation) => o.evidence.watchEvents.filter((e) => e.phase === 'Failed');
const shiftStartTime = (o: Observation, seconds: number) => {
  for (const e of o.evidence.watchEvents)
    if (e.startTime)
      e.startTime = new Date(Date.parse(e.startTime) + seconds * 1000).toISOString().replace('.000Z', 'Z');
};

describe('deadline-runs-out: the kubelet ends the pod at its active deadline, before the delete', () => {
  it("matches the model: the deadline starts the kill, with the pod's own grace; Failed, DeadlineExceeded, 137", () => {
    const r = grade(load('deadline-runs-out'));
    expect(r.verdict, r.explanation).toBe('matches-model');
    expect(r.prediction).toMatchObject({
      cause: 'deadline',
      graceSeconds: 2,
      outcome: 'cut',
      exitCode: 137,
      basis: 'observed',
      podStatus: { phase: 'Failed', reason: 'DeadlineExceeded' },
    });
    // The kill sequence began within the kubelet's 2 s reaction after the deadline, long before the delete.
    expect(r.prediction!.termAt - r.prediction!.deadlineAt!).toBeGreaterThanOrEqual(0);
    expect(r.prediction!.termAt - r.prediction!.deadlineAt!).toBeLessThan(3);
    expect(r.prediction!.deadlineAt).toBeLessThan(-10);
    expect(r.checks.find((c) => c.id === 'evidence.delete-grace')).toMatchObject({
      status: 'pass',
      reason: expect.stringContaining('ended for its active deadline'),
    });
    expect(r.lostPath).toBeNull();
  });

  it('on the real node (1.37.2) too: TERM 1.4 s after the deadline passed, 13.6 s before the delete', () => {
    const r = grade(load('node-deadline-runs-out'));
    expect(r.verdict, r.explanation).toBe('matches-model');
    expect(r.prediction).toMatchObject({ cause: 'deadline', graceSeconds: 2, outcome: 'cut', exitCode: 137 });
    expect(r.prediction!.termAt - r.prediction!.deadlineAt!).toBeGreaterThanOrEqual(0);
    expect(r.prediction!.termAt - r.prediction!.deadlineAt!).toBeLessThan(2);
  });

  it('the reason removed: the pod ended Failed with no DeadlineExceeded, which the kubelet never gives it', () => {
    const o = load('deadline-runs-out');
    for (const e of terminal(o)) {
      e.statusReason = null;
      e.statusMessage = null;
    }
    expect(check(o, 'outcome.pod-status')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/no reason, but the model has the deadline end the pod/),
    });
    expect(grade(o).verdict).not.toBe('matches-model');
  });

  it('another reason put in: the model knows no such cause', () => {
    const o = load('deadline-runs-out');
    for (const e of terminal(o)) {
      e.statusReason = 'Evicted';
      e.statusMessage = 'The node was low on resource: memory.';
    }
    expect(grade(o).verdict).not.toBe('matches-model');
  });

  it("the kubelet's message changed, or the reason shown while the container still ran: evidence invalid", () => {
    const edited = load('deadline-runs-out');
    terminal(edited)[0]!.statusMessage = 'Pod ran out of time';
    expect(check(edited, 'evidence.pod-status')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining("not the kubelet's"),
    });
    const early = load('deadline-runs-out');
    // The kubelet's verdict: Ready off while the container still runs, the terminal phase held back.
    const firstReady = early.evidence.watchEvents.findIndex((e) =>
      e.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    const verdictEvent = early.evidence.watchEvents
      .slice(firstReady)
      .find((e) => e.phase === 'Running' && e.conditions.some((c) => c.type === 'Ready' && c.status === 'False'))!;
    verdictEvent.statusReason = 'DeadlineExceeded';
    verdictEvent.statusMessage = terminal(early)[0]!.statusMessage;
    expect(grade(early).verdict).toBe('evidence-invalid');
  });

  it('the start time moved later (the deadline after the kill) or earlier (a kubelet that acted late)', () => {
    const later = load('deadline-runs-out');
    shiftStartTime(later, 10);
    expect(grade(later).verdict).toBe('evidence-invalid');
    const earlier = load('deadline-runs-out');
    shiftStartTime(earlier, -10);
    expect(check(earlier, 'evidence.kubelet-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining("after the pod's active deadline passed"),
    });
    expect(grade(earlier).verdict).not.toBe('matches-model');
  });

  it("the live pod's deadline edited away from what termlab renders", () => {
    const o = load('deadline-runs-out');
    o.pod!.activeDeadlineSeconds = 4;
    expect(check(o, 'evidence.pod-status')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining("termlab gives this scenario's pod 8s"),
    });
  });

  it('DeadlineExceeded claimed for a pod the delete ended, long before its deadline: evidence invalid', () => {
    const o = load('grace-one-second');
    expect(grade(o).verdict).toBe('matches-model');
    for (const e of terminal(o)) {
      e.statusReason = 'DeadlineExceeded';
      e.statusMessage = 'Pod was active on the node longer than the specified deadline';
    }
    expect(check(o, 'evidence.pod-status')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/received \d+\.\d+s before the deadline passed/),
    });
  });

  it('a version 3 file (no status reason recorded) is read, and its deadline run is inconclusive, never invalid', () => {
    const data = raw('deadline-runs-out');
    data.schemaVersion = 3;
    delete data.pod.activeDeadlineSeconds;
    for (const e of data.evidence.watchEvents) {
      delete e.statusReason;
      delete e.statusMessage;
    }
    for (const r of data.evidence.podReads) {
      delete r.statusReason;
      delete r.statusMessage;
    }
    const parsed = parseObservationFile(data, 'v3');
    expect(parsed.fileVersion).toBe(3);
    const r = grade(parsed.observation, { fileVersion: 3 });
    expect(r).toMatchObject({ verdict: 'inconclusive', prediction: { cause: 'deadline' } });
    expect(r.notes.join(' ')).toMatch(/schema version 3.*status reason/);
  });

  it("a kill by termlab's safety deadline (not the scenario's own) is the harness's delay: run again", () => {
    const o = load('deadline-runs-out');
    delete o.scenario.activeDeadlineSeconds;
    const r = grade(o);
    expect(safetyNetEnded(factsOf(o), r.prediction!)).toMatch(
      /outlived termlab's safety deadline \(activeDeadlineSeconds 8s\).*run it again/,
    );
    expect(r.lostPath).toMatch(/safety deadline/);
    expect(r.verdict).not.toBe('matches-model');
  });
});

describe('oom-on-term: the allocation on TERM crosses the memory limit', () => {
  it('matches the model: cut, 137 OOMKilled, between TERM and the allocation reaching the limit', () => {
    const r = grade(load('oom-on-term'));
    expect(r.verdict, r.explanation).toBe('matches-model');
    expect(r.prediction).toMatchObject({ cause: 'delete', outcome: 'cut', exitCode: 137, reason: 'OOMKilled' });
  });

  it('the reason edited to Error: the model predicts the memory kill', () => {
    const o = load('oom-on-term');
    for (const e of o.evidence.watchEvents)
      for (const c of e.containers) if (c.reason === 'OOMKilled') c.reason = 'Error';
    for (const r of o.evidence.podReads) for (const c of r.containers) if (c.reason === 'OOMKilled') c.reason = 'Error';
    o.finalState!.reason = 'Error';
    expect(check(o, 'outcome.exit-code')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('the model predicts the kernel kills it for memory'),
    });
  });

  it('the allocation edited (its size, its pace) or claimed where the scenario has none: evidence invalid', () => {
    const setAllocating = (o: Observation, field: string, value: unknown) => {
      const i = o.evidence.logLines.findIndex((l) => l.text.includes('"event":"allocating"'));
      o.evidence.logLines[i]!.text = JSON.stringify({ ...JSON.parse(o.evidence.logLines[i]!.text), [field]: value });
    };
    for (const [field, value] of [
      ['mib', 505],
      ['mibPerSecond', 256],
    ] as const) {
      const o = load('oom-on-term');
      setAllocating(o, field, value);
      expect(check(o, 'evidence.memory').status, field).toBe('fail');
    }
    const o = load('oom-on-term');
    o.scenario.termAllocateMiB = 519;
    expect(grade(o).verdict).toBe('evidence-invalid');
  });

  it('OOMKilled claimed where no allocation crosses a limit is still a fail', () => {
    const o = load('grace-one-second');
    for (const e of o.evidence.watchEvents)
      for (const c of e.containers) if (c.state === 'terminated') c.reason = 'OOMKilled';
    for (const r of o.evidence.podReads)
      for (const c of r.containers) if (c.state === 'terminated') c.reason = 'OOMKilled';
    o.finalState!.reason = 'OOMKilled';
    expect(check(o, 'outcome.exit-code')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('the memory limit killed the container, not the grace period'),
    });
  });
});

describe("a class of 40 on one simulated cluster (load 117 on 2 cores): pods that outlived termlab's safety deadline", () => {
  // Recorded by `npm run bench:class-run -- --students 40`: Ready to the request's acceptance took 52-59 s, the
  // harness's delete reached the API 12.7 s (short-grace) and 41.9 s (restored-grace) after it was issued, and by then
  // the kubelet had failed the pod for its deadline (79 s, 89 s): the server drained and exited 0, phase Failed.
  it.each([['class-safety-net-short-grace'], ['class-safety-net-restored-grace']])(
    "%s: the harness's own delay, inconclusive and run again, never evidence invalid",
    (name) => {
      const r = grade(load(name));
      expect(r.verdict, r.explanation).toBe('inconclusive');
      expect(r.prediction).toMatchObject({ cause: 'deadline' });
      expect(r.checks.filter((c) => c.status === 'fail')).toEqual([]);
      expect(r.lostPath).toMatch(/outlived termlab's safety deadline/);
    },
  );
});
