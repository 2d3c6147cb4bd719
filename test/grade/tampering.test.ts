// Hand-edited files, one case per class the issue lists: none may grade as "matches the model".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTermlabError } from '../../lib/errors.ts';
import { grade } from '../../harness/grade/grade.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import { predict } from '../../harness/grade/theory.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { removals } from '../support/mutations.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';
import { repoRoot } from '../support/processes.ts';

const example = (name: string): Observation =>
  parseObservationFile(
    JSON.parse(readFileSync(join(repoRoot, 'reports', 'examples', `${name}.observation.json`), 'utf8')),
    name,
  ).observation;
const check = (o: Observation, id: string) => grade(o).checks.find((c) => c.id === id)!;
const lineIndex = (o: Observation, event: string) =>
  o.evidence.logLines.findIndex((l) => l.text.includes(`"event":"${event}"`));
const setLogField = (o: Observation, event: string, field: string, value: unknown) => {
  const i = lineIndex(o, event);
  o.evidence.logLines[i]!.text = JSON.stringify({ ...JSON.parse(o.evidence.logLines[i]!.text), [field]: value });
};
/** The short-grace cut "fixed" to completed/0 in the fields a student would edit. */
function claimCompleted(o: Observation): Observation {
  o.request = {
    ...o.request,
    outcome: 'completed',
    doneSeen: true,
    done: { bytes: o.request.bytes, sha256: o.request.sha256! },
    errorCode: null,
  };
  o.finalState = { ...o.finalState!, exitCode: 0, reason: 'Completed' };
  return o;
}

describe('the committed examples grade as they say', () => {
  it.each([['completed-0'], ['cut-137-after-grace'], ['cut-17-immediate']])('%s matches the model', (name) => {
    expect(grade(example(name)).verdict).toBe('matches-model');
  });
});

describe('tampering: the final state against every watch event', () => {
  it('an edited final state while the cited and later events still say 137', () => {
    const o = claimCompleted(example('cut-137-after-grace'));
    expect(grade(o)).toMatchObject({
      verdict: 'evidence-invalid',
      explanation: expect.stringMatching(/final state says exit 0.*shows terminated 137/),
    });
  });
  it('a forged copy of the cited event placed first', () => {
    const o = claimCompleted(example('cut-137-after-grace'));
    const cited = o.evidence.watchEvents.find(
      (e) => e.resourceVersion === (o.finalState!.from as { resourceVersion: string }).resourceVersion,
    )!;
    o.evidence.watchEvents.unshift({
      ...structuredClone(cited),
      containers: cited.containers.map((c) => ({ ...c, exitCode: 0, reason: 'Completed' })),
    });
    expect(check(o, 'evidence.watch-consistent')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining(`resourceVersion ${cited.resourceVersion}`),
    });
    expect(grade(o).verdict).toBe('evidence-invalid');
  });
  it('a forged event with its own resourceVersion that later events contradict', () => {
    const o = claimCompleted(example('cut-137-after-grace'));
    const firstEnd = o.evidence.watchEvents.findIndex((e) => e.containers.some((c) => c.state === 'terminated'));
    const forged = {
      ...structuredClone(o.evidence.watchEvents[firstEnd]!),
      resourceVersion: '1',
      phase: 'Succeeded',
      containers: [{ name: 'lab', state: 'terminated' as const, ready: false, exitCode: 0, reason: 'Completed' }],
    };
    o.evidence.watchEvents.splice(firstEnd, 0, forged);
    o.finalState!.from = { kind: 'watch', type: forged.type, resourceVersion: '1' };
    expect(check(o, 'evidence.watch-consistent')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('a container ends once'),
    });
  });
  it('an extra container with exit 0', () => {
    const o = claimCompleted(example('cut-137-after-grace'));
    for (const e of o.evidence.watchEvents)
      e.containers.push({ name: 'helper', state: 'terminated', ready: false, exitCode: 0, reason: 'Completed' });
    o.finalState!.container = 'helper';
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.watch-consistent').reason).toContain('"helper"');
  });
  it('the kill events deleted altogether', () => {
    const o = claimCompleted(example('cut-137-after-grace'));
    o.evidence.watchEvents = o.evidence.watchEvents.filter((e) => !e.containers.some((c) => c.state === 'terminated'));
    expect(grade(o).verdict).toBe('evidence-invalid');
    o.finalState = null;
    o.timeline.containerTerminated = null;
    expect(grade(o).verdict).not.toBe('matches-model');
  });
  it('the reason edited while every watch event still says OOMKilled', () => {
    const o = buildObservation(BASE_SCENARIO, { outcome: 'cut', exitCode: 137, reason: 'OOMKilled', exitAt: 5 });
    o.finalState!.reason = 'Error';
    expect(check(o, 'evidence.terminated-observed')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('OOMKilled'),
    });
  });
  it('137 with ContainerStatusUnknown is never credited to the grace', () => {
    const o = buildObservation(BASE_SCENARIO, { reason: 'ContainerStatusUnknown' });
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'attribution.exit-code')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('lost the container'),
    });
  });
  it('a final state from a pod read of another pod', () => {
    const o = example('cut-137-after-grace');
    o.evidence.podReads.push({
      reason: 'final',
      at: o.timeline.podDeleted!.at,
      found: true,
      resourceVersion: '999',
      uid: 'someone-else',
      phase: 'Succeeded',
      deletionTimestamp: null,
      deletionGracePeriodSeconds: null,
      finalizers: [],
      containers: [{ name: 'lab', state: 'terminated', exitCode: 0, reason: 'Completed' }],
    });
    o.finalState = {
      ...o.finalState!,
      exitCode: 0,
      reason: 'Completed',
      from: { kind: 'read', index: o.evidence.podReads.length - 1, resourceVersion: '999' },
    };
    expect(check(o, 'evidence.terminated-observed')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('someone-else'),
    });
  });
});

describe('tampering: the request against the server and the client', () => {
  it('"completed" with doneSeen false', () => {
    const o = buildObservation({ ...BASE_SCENARIO, terminationGracePeriodSeconds: 15 });
    o.request.doneSeen = false;
    expect(check(o, 'evidence.request-record').status).toBe('fail');
  });
  it('"rejected" with a done line seen: a 503 is answered before any work, so nothing wrote one (as a retry attempt\'s record is checked)', () => {
    const o = example('rejected-503');
    expect(check(o, 'evidence.request-record').status).toBe('pass');
    o.request = {
      ...o.request,
      doneSeen: true,
      done: { bytes: o.request.bytes, sha256: o.request.sha256 ?? '0'.repeat(64) },
      sha256: o.request.sha256 ?? '0'.repeat(64),
    };
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'fail',
      reason: 'the request is recorded as rejected, but a done line vouching for its bytes was seen',
    });
  });
  it('a byte count the work asked for cannot write', () => {
    const o = buildObservation({ ...BASE_SCENARIO, terminationGracePeriodSeconds: 15 });
    o.request.bytes = 5_000_000;
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('more than'),
    });
  });
  it("a byte count that differs from the server's own", () => {
    const o = example('completed-0');
    o.request.bytes -= 1;
    o.request.done!.bytes -= 1;
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('the server wrote'),
    });
  });
  it('a duration too short for the work', () => {
    const o = example('completed-0');
    o.scenario.workMs = 12_000;
    expect(grade(o).verdict).toBe('evidence-invalid');
  });
  it('no completion line from the server in the log', () => {
    const o = example('completed-0');
    o.evidence.logLines = o.evidence.logLines.filter((l) => !l.text.includes('"event":"completed"'));
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('never logged completing it'),
    });
  });
  it('no completion line, the container killed as the client got its end: never a match, too close to call', () => {
    const o = example('completed-0');
    o.evidence.logLines = o.evidence.logLines.filter((l) => !l.text.includes('"event":"completed"'));
    o.finalState!.exitCode = 137;
    expect(grade(o).verdict).not.toBe('matches-model');
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining(
        'the kill landed between its done line and its log line, or the record was edited',
      ),
    });
  });
  it('a request that ended before the delete, or before it was sent', () => {
    const o = example('cut-137-after-grace');
    o.timeline.requestEnded = { at: { ...o.timeline.deleteIssued!.at, mono: o.timeline.deleteIssued!.at.mono - 1 } };
    expect(grade(o).verdict).toBe('evidence-invalid');
    o.timeline.requestEnded = { at: { ...o.timeline.requestSent!.at, mono: o.timeline.requestSent!.at.mono - 1 } };
    expect(check(o, 'evidence.clock-monotonic').reason).toContain('ended before it was sent');
  });
  it('a request answered by another pod', () => {
    const o = example('cut-137-after-grace');
    o.request.podUid = 'a-neighbour';
    expect(check(o, 'evidence.request-reached-pod')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('a-neighbour'),
    });
  });
});

describe("tampering: the model's inputs", () => {
  it('the grace edited in the delete response only', () => {
    const o = example('cut-137-after-grace');
    o.timeline.deleteAcknowledged!.deletionGracePeriodSeconds = 30;
    expect(check(o, 'evidence.delete-grace')).toMatchObject({ status: 'fail', reason: expect.stringContaining('30s') });
  });
  it('workMs edited in the scenario', () => {
    const o = example('cut-137-after-grace');
    o.scenario.workMs = 3_000;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.request-record').reason).toContain('asked for 10000 ms');
  });
  it('deleteDelayMs edited in the scenario', () => {
    const longer = example('cut-137-after-grace');
    longer.scenario.deleteDelayMs = 9_000;
    expect(grade(longer).verdict).toBe('evidence-invalid');
    const shorter = example('cut-137-after-grace');
    shorter.scenario.deleteDelayMs = 0;
    expect(grade(shorter).verdict).toBe('inconclusive');
  });
  it('a 30 s hook in the live pod, 3 s in the scenario', () => {
    const o = example('cut-137-after-grace');
    (o.pod!.containers[0]!.lifecycle as { preStop: { exec: { command: string[] } } }).preStop.exec.command[2] = '30000';
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('exec sleep 30s'),
    });
  });
});

describe('a failed run is not a forged file', () => {
  it('a server that never started, and a delete the API answered with grace 0 (the pod had finished), are inconclusive', () => {
    const o = example('cut-137-after-grace');
    setLogField(o, 'listening', 'event', 'note');
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('never ran'),
    });
    const finished = example('cut-137-after-grace');
    finished.timeline.deleteAcknowledged!.deletionGracePeriodSeconds = 0;
    expect(check(finished, 'evidence.delete-grace')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('already finished'),
    });
    expect(grade(finished).verdict).not.toBe('matches-model');
  });
});

describe('tampering: times without evidence behind them', () => {
  it('a TERM on the timeline with no log line behind it', () => {
    const o = example('cut-137-after-grace');
    setLogField(o, 'signal', 'event', 'note'); // the line stays, so no other citation moves
    expect(check(o, 'evidence.timeline-cited')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('no log line behind it'),
    });
  });
  it('a TERM time moved on the timeline only', () => {
    const o = example('cut-137-after-grace');
    o.timeline.termReceived!.at.time = new Date(Date.parse(o.timeline.termReceived!.at.time) + 1500).toISOString();
    expect(check(o, 'evidence.timeline-cited').status).toBe('fail');
  });
  it('a TERM moved on the harness clock only (its time and citation as before): the failure names the field and both values', () => {
    const o = example('cut-137-after-grace');
    const at = o.timeline.termReceived!.at;
    const honest = at.mono;
    at.mono += 2000;
    expect(check(o, 'evidence.timeline-cited')).toMatchObject({
      status: 'fail',
      reason: `timeline.termReceived.at.mono is ${honest + 2000}, but the evidence gives ${honest}`,
    });
  });
  it('derived points edited on the timeline alone fail evidence.timeline-cited and move no other check: the checks read the timeline the grader derives', () => {
    const honest = grade(example('cut-137-after-grace')).checks.filter((c) => c.id !== 'evidence.timeline-cited');
    const o = example('cut-137-after-grace');
    // The end seen 3 s sooner (on one clock) and no TERM: were they read, api-times and attribution.exit-code would move.
    const end = o.timeline.containerTerminated!.at;
    end.mono -= 3_000;
    end.wall = new Date(Date.parse(end.wall) - 3_000).toISOString();
    o.timeline.termReceived = null;
    const edited = grade(o).checks;
    expect(edited.find((c) => c.id === 'evidence.timeline-cited')!.status).toBe('fail');
    expect(edited.filter((c) => c.id !== 'evidence.timeline-cited')).toEqual(honest);
  });
  it("a log line's time moved alone", () => {
    const o = example('completed-0');
    setLogField(
      o,
      'completed',
      'time',
      new Date(Date.parse(JSON.parse(o.evidence.logLines[lineIndex(o, 'completed')]!.text).time) + 5000).toISOString(),
    );
    expect(check(o, 'evidence.clock-monotonic').reason).toContain('wall time and monotonic time disagree');
  });
  it("finishedAt moved into the model's window against the harness clock", () => {
    const o = buildObservation(BASE_SCENARIO, { exitAt: 0.4 });
    expect(grade(o).verdict).toBe('inconclusive');
    const deletedAt = Date.parse(o.timeline.deleteAcknowledged!.deletionTimestamp) - 5_000;
    o.finalState!.finishedAt = new Date(deletedAt + 5_000).toISOString().replace('.000Z', 'Z');
    expect(check(o, 'evidence.api-times')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/API times.*harness clock/),
    });
  });
  it("the server's exit line contradicting the final state", () => {
    const o = example('completed-0');
    setLogField(o, 'exit', 'code', 3);
    expect(check(o, 'evidence.server-exit').status).toBe('fail');
  });
  it('an exit line of 0 with a final 137 is the kill racing the exit: inconclusive, not a contradiction', () => {
    const o = example('completed-0');
    o.finalState = { ...o.finalState!, exitCode: 137, reason: 'Error' };
    expect(check(o, 'evidence.server-exit')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('raced'),
    });
    o.finalState = { ...o.finalState!, exitCode: 143, reason: 'Error' };
    expect(check(o, 'evidence.server-exit').status).toBe('fail');
  });
});

describe('tampering: fields a real API always fills, nulled to dodge a check', () => {
  it('a pod watch event with uid null is evidence invalid', () => {
    const o = example('cut-137-after-grace');
    o.evidence.watchEvents[0]!.uid = null;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.single-pod-uid')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('has no UID'),
    });
  });
  it('an OOMKilled reason removed everywhere is inconclusive, naming reason', () => {
    const o = example('cut-137-after-grace');
    for (const e of o.evidence.watchEvents) for (const c of e.containers) if (c.state === 'terminated') delete c.reason;
    for (const r of o.evidence.podReads) for (const c of r.containers) if (c.state === 'terminated') delete c.reason;
    o.finalState!.reason = null;
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'evidence.terminated-observed')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('`reason`'),
    });
  });
  it('an OOMKilled in one event is never laundered by a null reason elsewhere', () => {
    const o = example('cut-137-after-grace');
    const ends = o.evidence.watchEvents.filter((e) => e.containers.some((c) => c.state === 'terminated'));
    for (const e of ends) for (const c of e.containers) delete c.reason;
    ends.at(-1)!.containers[0]!.reason = 'OOMKilled';
    o.finalState!.reason = null;
    expect(grade(o).verdict).toBe('evidence-invalid');
  });
  it('a final state with only its reason nulled is not "matches"', () => {
    const o = example('cut-137-after-grace');
    o.finalState!.reason = null;
    expect(grade(o).verdict).not.toBe('matches-model');
  });
  it('finishedAt nulled while a terminated state was seen is inconclusive, naming finishedAt', () => {
    const o = example('cut-137-after-grace');
    o.finalState!.finishedAt = null;
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'evidence.terminated-observed')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('finalState.finishedAt'),
    });
  });
});

describe("tampering: the server's own story", () => {
  const renameEvent = (o: Observation, event: string) => setLogField(o, event, 'event', `gone-${event}`);
  it('a graceful exit 0 with a complete log but no signal line is not "matches"', () => {
    const o = example('completed-0');
    renameEvent(o, 'signal');
    expect(grade(o).verdict).not.toBe('matches-model');
    expect(check(o, 'evidence.server-exit')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('no signal line'),
    });
  });
  it('an exec hook with a complete log but no hook lines is not "matches"', () => {
    const o = example('completed-0');
    renameEvent(o, 'hook-start');
    renameEvent(o, 'hook-end');
    expect(grade(o).verdict).not.toBe('matches-model');
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('no hook-start line'),
    });
  });
  const moveHookEnd = (o: ReturnType<typeof example>, ms: number) => {
    const line = JSON.parse(o.evidence.logLines[lineIndex(o, 'hook-end')]!.text) as { time: string; mono: number };
    setLogField(o, 'hook-end', 'time', new Date(Date.parse(line.time) + ms).toISOString());
    setLogField(o, 'hook-end', 'mono', line.mono + ms);
  };
  it("hook lines closer than the hook's declared length are evidence invalid, naming both: a sleep never ends early", () => {
    const o = example('completed-0');
    moveHookEnd(o, -2_000);
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(
        /\(hook-start\) and log line \d+ \(hook-end\) are 10\d\d ms apart, but the hook's length is 3000 ms/,
      ),
    });
  });
  it("hook lines further apart than the hook's declared length are never a match: a starved machine or an edit, the hook's end untrusted", () => {
    const o = example('completed-0');
    moveHookEnd(o, 3_000);
    expect(grade(o).verdict).not.toBe('matches-model');
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(
        /\(hook-start\) and log line \d+ \(hook-end\) are 60\d\d ms apart, but the hook's length is 3000 ms .*starved while the hook slept, or the times were edited/,
      ),
    });
  });
});

describe("tampering: the request's and the exit's times", () => {
  it('a completed request that ends long after the container was seen terminated is evidence invalid on the direct path', () => {
    const o = example('completed-0');
    o.run.transport = 'direct';
    o.timeline.requestEnded!.at.mono = o.timeline.containerTerminated!.at.mono + 5_000;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.request-record')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('after the container was seen terminated'),
    });
  });
  it("over a port-forward, a late end is the relay's only when the server logged its completion before its exit", () => {
    const relayed = example('completed-0');
    relayed.run.transport = 'portforward';
    relayed.timeline.requestEnded!.at.mono = relayed.timeline.containerTerminated!.at.mono + 5_000;
    expect(check(relayed, 'evidence.request-record')?.reason ?? '').not.toContain(
      'after the container was seen terminated',
    );
    const unordered = example('completed-0');
    unordered.run.transport = 'portforward';
    unordered.timeline.requestEnded!.at.mono = unordered.timeline.containerTerminated!.at.mono + 5_000;
    setLogField(unordered, 'exit', 'event', 'gone-exit');
    expect(grade(unordered).verdict).toBe('evidence-invalid');
  });
  it('an exit 0 outside the model\'s window for its exit is not "matches"', () => {
    const scenario = { ...BASE_SCENARIO, terminationGracePeriodSeconds: 30 };
    const p = predict(scenario);
    expect(p.exitCode).toBe(0);
    expect(grade(buildObservation(scenario, { outcome: 'completed', exitCode: 0, exitAt: p.exitAt })).verdict).toBe(
      'matches-model',
    );
    const o = buildObservation(scenario, { outcome: 'completed', exitCode: 0, exitAt: p.exitAt + 8 });
    expect(grade(o).verdict).not.toBe('matches-model');
    expect(check(o, 'attribution.exit-code')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('exit 0 not where the model puts it'),
    });
  });
});

describe('tampering: log-line fields of the wrong type', () => {
  it.each([
    ['accepted', 'podUid', { toString: 1 }],
    ['listening', 'podName', { toString: null }],
    ['exit', 'code', { toString: 0 }],
    ['completed', 'bytes', [1]],
  ])(
    'a %s line whose %s is an object or array is evidence invalid naming the line, without crashing',
    (event, field, value) => {
      const o = example('completed-0');
      setLogField(o, event, field, value);
      const r = grade(o);
      expect(r.verdict).toBe('evidence-invalid');
      expect(check(o, 'evidence.lab-lines')).toMatchObject({
        status: 'fail',
        reason: expect.stringContaining(`log line ${lineIndex(o, event)} (${event})`),
      });
    },
  );
  it('a log line nested 20000 levels deep is evidence invalid, not a stack overflow', () => {
    const o = example('completed-0');
    setLogField(o, 'accepted', 'ms', 0);
    const i = lineIndex(o, 'accepted');
    o.evidence.logLines[i]!.text = o.evidence.logLines[i]!.text.replace(
      '"ms":0',
      `"ms":${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    );
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(check(o, 'evidence.lab-lines')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/^log line \d+ is nested more than 64 levels/),
    });
  });
});

describe('one tolerance rule for outcome and exit code', () => {
  // Work ends 5.05 s after the delete: inside the window's 5-7 s, and within the observed times'
  // resolution of the kill the built file's TERM puts at 5.07 s.
  const closeCall = { ...BASE_SCENARIO, workMs: 6_050 };
  it('within the tolerance of the kill, outcome and exit code are inconclusive, never "differs"', () => {
    expect(predict(closeCall).marginSeconds).toBeLessThan(1);
    const o = buildObservation(closeCall, { outcome: 'cut', exitCode: 137, exitAt: 5 });
    const r = grade(o);
    expect(r.checks.find((c) => c.id === 'outcome.request')!.status).toBe('inconclusive');
    expect(r.checks.find((c) => c.id === 'outcome.exit-code')!.status).toBe('inconclusive');
    expect(r.verdict).toBe('inconclusive');
  });
  it('pins the boundary: work ending exactly at the kill is predicted completed, and either result is inconclusive', () => {
    const exact = { ...BASE_SCENARIO, workMs: 6_000 }; // 1 s delay + 5 s: ends at the kill
    const p = predict(exact);
    // workEndsAt <= killAt: the work is done by the instant of the kill, so the model says completed.
    expect(p).toMatchObject({ outcome: 'completed', exitCode: 0, marginSeconds: 0 });
    for (const actual of [
      { outcome: 'cut' as const, exitCode: 137, exitAt: 5 },
      { outcome: 'completed' as const, exitCode: 0, exitAt: 5 },
    ]) {
      expect(grade(buildObservation(exact, actual)).verdict).toBe('inconclusive');
    }
  });
  it('outside the tolerance, a different exit code still differs', () => {
    const o = buildObservation(
      { ...BASE_SCENARIO, terminationGracePeriodSeconds: 30 },
      { outcome: 'cut', exitCode: 137, exitAt: 30 },
    );
    expect(grade(o).checks.find((c) => c.id === 'outcome.exit-code')!.status).toBe('fail');
  });
});

describe('the lab pair', () => {
  it('refuses a "restored" run whose grace is not longer than the short one', () => {
    const short = grade(example('cut-137-after-grace'));
    const restored = grade(example('completed-0'));
    const [pair] = gradePairs([short, { ...restored, graceSeconds: short.graceSeconds }]);
    expect(pair!.checks[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('not longer than the short one'),
    });
  });
});

describe('every hook kind, built the way a kubelet following the rules would record it', () => {
  const kinds = [
    { kind: 'none' as const },
    { kind: 'sleep-action' as const, seconds: 3 },
    { kind: 'httpGet' as const, ms: 2_000 },
    { kind: 'exec-sleep' as const, seconds: 10 },
  ];
  it.each(kinds.map((preStop) => [preStop.kind, preStop] as const))(
    '%s matches the model, and no field nulled or removed crashes the grader',
    (_kind, preStop) => {
      const o = buildObservation({ ...BASE_SCENARIO, preStop, terminationGracePeriodSeconds: 30 });
      expect(grade(o)).toMatchObject({ verdict: 'matches-model' });
      for (const mutation of removals(o)) {
        try {
          grade(parseObservationFile(mutation.data, 'built').observation);
        } catch (error) {
          if (!isTermlabError(error)) throw new Error(`${mutation.path}: ${(error as Error).stack}`);
        }
      }
    },
  );
});
