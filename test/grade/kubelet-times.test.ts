// The model conditioned on what the kubelet did: recorded runs of the check:model grid (the simulated
// cluster, 1.37) that the model's window after the delete calls too close, called from the observed
// TERM; and a hand-edited TERM or hook start, caught by the cross-examination instead of being used.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { observedKubelet } from '../../harness/grade/kubelet-times.ts';
import { tooCloseToCall } from '../../harness/grade/outcome.ts';
import { factsOf } from '../../harness/grade/facts.ts';
import { predict } from '../../harness/grade/theory.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';

const dir = join(import.meta.dirname, 'fixtures', 'sim-grid');
const load = (name: string): Observation =>
  parseObservationFile(JSON.parse(readFileSync(join(dir, `${name}.observation.json`), 'utf8')), name).observation;
const check = (o: Observation, id: string) => grade(o).checks.find((c) => c.id === id)!;

/** The model as grade() asks it, for the file as it now stands (with the delay the harness waited). */
function conditioned(o: Observation) {
  const delay = o.timeline.deleteIssued!.at.mono - o.timeline.requestAccepted!.at.mono;
  return predict(
    { ...o.scenario, deleteDelayMs: delay },
    o.timeline.deleteAcknowledged!.deletionGracePeriodSeconds,
    undefined,
    observedKubelet(factsOf(o)),
  );
}

const lineOf = (o: Observation, event: string) =>
  o.evidence.logLines.findIndex((l) => l.text.includes(`"event":"${event}"`));

/** Moves one lab line by `ms` the way a careful hand would: its time, its monotonic time, the runtime's stamp, and the timeline point that cites it. */
function moveLine(o: Observation, event: 'signal' | 'hook-start', ms: number): void {
  const i = lineOf(o, event);
  const raw = o.evidence.logLines[i]!;
  const fields = JSON.parse(raw.text) as { time: string; mono: number };
  fields.time = new Date(Date.parse(fields.time) + ms).toISOString();
  fields.mono += ms;
  raw.text = JSON.stringify(fields);
  const ns = raw.apiTime!.slice(23);
  raw.apiTime = new Date(Date.parse(raw.apiTime!) + ms).toISOString().slice(0, 23) + ns;
  const point = event === 'signal' ? o.timeline.termReceived : o.timeline.hookStart;
  if (point?.source === 'container-log') point.at = { time: fields.time, mono: fields.mono };
}

describe('the model conditioned on the observed kubelet', () => {
  it.each([
    'im-exec1-g3-w2000-d500', // completed: work ends 1.50 s after the delete, TERM at 1.79 s
    'im-none-g3-w2000-d500', // cut, 17: TERM at 1.10 s, before the work's end at 1.50 s
    'it-http4-g3-w7000-d500', // ignore-term: work ends at 6.48 s, the kill at 6.93 s
    'gr-http4-g3-w7000-d1500', // cut: the kill at 5.03 s, work ending at 5.50 s
  ])('%s: too close to call from the delete alone, called from the observed TERM, and it matches', (name) => {
    const o = load(name);
    // Before the run (termlab predict) the model has the delete only: its 0-2 s window leaves this open.
    const before = predict(o.scenario);
    expect(before.basis).toBe('window');
    expect(tooCloseToCall(before)).toBe(true);
    const r = grade(o);
    expect(r.prediction).toMatchObject({ basis: 'observed' });
    expect(tooCloseToCall(r.prediction!)).toBe(false);
    expect(check(o, 'evidence.kubelet-times').status).toBe('pass');
    expect(r.verdict).toBe('matches-model');
  });

  it("compares a student's prediction, made before the run, with the model's answer before the run", () => {
    const o = load('im-exec1-g3-w2000-d500');
    // The window's earliest TERM (1 s, after the 1 s hook) comes before the work's end: it says cut.
    expect(predict(o.scenario)).toMatchObject({ outcome: 'cut', exitCode: 17 });
    const r = grade(o, { predictions: { predictions: { [o.scenario.name]: { outcome: 'cut', exitCode: 17 } } } });
    expect(r.checks.find((c) => c.id === 'prediction.vs-model')!.status).toBe('pass');
    expect(r.prediction).toMatchObject({ outcome: 'completed' });
  });

  it('with no TERM in the evidence it keeps the window', () => {
    const o = load('im-none-g3-w2000-d500');
    // The TERM line gone from the log, and so from the timeline (the grader derives it from the log).
    const term = lineOf(o, 'signal');
    expect(term).toBeGreaterThanOrEqual(0);
    o.evidence.logLines.splice(term, 1);
    o.timeline.termReceived = null;
    expect(observedKubelet(factsOf(o))).toBeNull();
  });
});

describe('a hand-edited kubelet time is caught, never used to flip the prediction', () => {
  it('TERM moved later, past the work\'s end: the harness received the line before it was "written"', () => {
    const o = load('im-none-g3-w2000-d500');
    expect(conditioned(o)).toMatchObject({ outcome: 'cut' });
    moveLine(o, 'signal', 600);
    // Used, the edit would flip the prediction: TERM now after the work's end.
    expect(conditioned(o)).toMatchObject({ outcome: 'completed' });
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/^log line 2 \(signal\) was written at .*after the harness received it/),
    });
  });

  it("TERM moved later together with its receipt: the harness's own clock then runs backwards", () => {
    const o = load('im-none-g3-w2000-d500');
    moveLine(o, 'signal', 600);
    const raw = o.evidence.logLines[lineOf(o, 'signal')]!;
    raw.receivedAt = {
      mono: raw.receivedAt.mono + 600,
      wall: new Date(Date.parse(raw.receivedAt.wall) + 600).toISOString(),
    };
    expect(conditioned(o)).toMatchObject({ outcome: 'completed' });
    expect(grade(o).verdict).toBe('evidence-invalid');
  });

  it("TERM moved earlier, before the work's end: sooner than the exec hook lets the kubelet send it", () => {
    const o = load('im-exec1-g3-w2000-d500');
    expect(conditioned(o)).toMatchObject({ outcome: 'completed' });
    moveLine(o, 'signal', -400);
    expect(conditioned(o)).toMatchObject({ outcome: 'cut' });
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('the kubelet waits for the hook (1s, at most the 3s grace) before TERM'),
    });
  });

  it("the kill sequence's start (the hook's first line) moved earlier: before the Killing event", () => {
    const o = load('it-http4-g3-w7000-d500');
    moveLine(o, 'hook-start', -1_500);
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/^the Killing event \(.*\) is after log line \d+ \(hook-start\)/),
    });
  });

  it('the hook\'s first line moved later: the harness received it before it was "written"', () => {
    const o = load('it-http4-g3-w7000-d500');
    moveLine(o, 'hook-start', 500);
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('(hook-start) was written at'),
    });
  });

  it("TERM's text moved alone, the runtime's stamp left: the stamp came before the line was written", () => {
    const o = load('im-exec1-g3-w2000-d500');
    const stamp = o.evidence.logLines[lineOf(o, 'signal')]!.apiTime;
    // Less than the acceptance's round trip (89 ms): the receipt alone could not tell.
    moveLine(o, 'signal', 80);
    o.evidence.logLines[lineOf(o, 'signal')]!.apiTime = stamp;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('but the runtime stamped it at'),
    });
  });
});

describe('a kubelet delayed between its Killing event and acting on it', () => {
  // Recorded on the real node (v1.37.2, direct transport): the kubelet SIGSTOPped for 5 s just after it
  // recorded Killing, so its hook and TERM came late. The kubelet's own delay: never "evidence invalid".
  const paused = parseObservationFile(
    JSON.parse(
      readFileSync(
        join(import.meta.dirname, 'fixtures', 'kubelet-paused-late', 'restored-grace.observation.json'),
        'utf8',
      ),
    ),
    'paused',
  ).observation;

  it('is inconclusive with that cause, not evidence invalid', () => {
    const result = grade(paused);
    expect(result.verdict).toBe('inconclusive');
    expect(check(paused, 'evidence.kubelet-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('the kubelet was delayed between recording Killing and acting'),
    });
  });
});
