// The lost-path rule, on files laid out as issue 21 measured them on the real node: the API server
// SIGKILLed right after the delete, the watch dropped, the server logged `aborted` 145 ms later,
// before the preStop hook began. And the hand edits that would use a claimed loss to hide a cut.
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

const RESTORED = {
  ...BASE_SCENARIO,
  name: 'restored-grace',
  terminationGracePeriodSeconds: 15,
  labPair: { id: 'grace', role: 'restored' as const },
};
const SHORT = { ...BASE_SCENARIO, labPair: { id: 'grace', role: 'short' as const } };

const at = (o: Observation, mono: number) => ({
  mono,
  wall: new Date(Date.parse(o.timeline.deleteIssued!.at.wall) + mono - o.timeline.deleteIssued!.at.mono).toISOString(),
});

/** The server's `aborted` line for the request, written at `writtenMono`, in its place in the log (citations after it move down one). */
function addAborted(o: Observation, writtenMono: number): void {
  const sample = JSON.parse(o.evidence.logLines[0]!.text);
  const time = new Date(
    Date.parse(o.timeline.deleteIssued!.at.wall) + writtenMono - o.timeline.deleteIssued!.at.mono,
  ).toISOString();
  const mono = sample.mono + (Date.parse(time) - Date.parse(sample.time));
  const index = o.evidence.logLines.findIndex((l) => Date.parse(JSON.parse(l.text).time) > Date.parse(time));
  const place = index < 0 ? o.evidence.logLines.length : index;
  // Received 3 ms after it was written, as the builder's other lines.
  o.evidence.logLines.splice(place, 0, {
    receivedAt: at(o, writtenMono + 3),
    apiTime: time,
    text: JSON.stringify({
      event: 'aborted',
      time,
      mono,
      pid: sample.pid,
      podUid: sample.podUid,
      id: o.request.id,
      elapsedMs: 1200,
    }),
  });
  for (const point of [o.timeline.hookStart, o.timeline.hookEnd, o.timeline.termReceived]) {
    if (point?.from.kind === 'log' && point.from.line >= place) point.from.line++;
  }
}

/** The API server gone at `lossMono` for 2 s (back before the container's end is seen): the forward cut without a close frame, the watch dropped. */
function addOutage(o: Observation, lossMono: number): void {
  o.evidence.transport = [
    { connection: 1, event: 'opened', at: at(o, o.timeline.requestSent!.at.mono - 5) },
    { connection: 1, event: 'closed', at: at(o, lossMono + 10), by: 'remote', code: 1006 },
  ];
  o.evidence.watchLifecycle.push(
    { event: 'dropped', at: at(o, lossMono), resourceVersion: '105', detail: 'ECONNRESET' },
    { event: 'resumed', at: at(o, lossMono + 2000), resourceVersion: '105', detail: '3 tries over 2.0s' },
  );
  // The run is observed only once the API is back.
  const resumed = at(o, lossMono + 2000).wall;
  if (Date.parse(o.run.observedAt) < Date.parse(resumed)) o.run.observedAt = resumed;
}

/** The issue's short-grace: lost before the hook, so nothing in flight at TERM, exit 0 instead of 137. */
function lostShortGrace(): Observation {
  const o = buildObservation(SHORT, { outcome: 'cut', exitCode: 0, exitAt: 3.1 });
  const deleted = o.timeline.deleteIssued!.at.mono;
  o.request.errorCode = 'UND_ERR_SOCKET';
  o.timeline.requestEnded = { at: at(o, deleted + 30) };
  addOutage(o, deleted + 13);
  addAborted(o, deleted + 30);
  return o;
}

describe('a request the harness lost', () => {
  it('is inconclusive with the cause and the times, never "differs" (the issue\'s short-grace)', () => {
    const result = grade(lostShortGrace());
    expect(result.verdict, result.explanation).toBe('inconclusive');
    expect(result.explanation).toMatch(
      /^the connection to the pod was lost at 0\.\d\d s, before the preStop hook began \(log line \d+ \(aborted\): the server saw its client go while alive/,
    );
    expect(result.explanation).toMatch(
      /the port-forward's connection 1 was closed by the remote side with code 1006 at 0\.02 s; the API server was unreachable from 0\.01 s to 2\.01 s/,
    );
    expect(result.checks.filter((c) => c.status === 'fail')).toEqual([]);
  });

  it('makes the lab pair inconclusive, never fail', () => {
    const restored = buildObservation(RESTORED, { outcome: 'cut', exitCode: 0 }, 'uid-0002');
    const deleted = restored.timeline.deleteIssued!.at.mono;
    restored.timeline.requestEnded = { at: at(restored, deleted + 30) };
    addOutage(restored, deleted + 13);
    addAborted(restored, deleted + 30);
    const results = [
      grade(lostShortGrace(), { source: 'r/short.json' }),
      grade(restored, { source: 'r/restored.json' }),
    ];
    expect(results.map((r) => r.verdict)).toEqual(['inconclusive', 'inconclusive']);
    const [pair] = gradePairs(results);
    expect(pair!.checks[0]!.status).toBe('inconclusive');
    expect(pair!.checks[0]!.reason).toMatch(
      /the short-grace run \(5s\) is inconclusive: the connection to the pod was lost/,
    );
  });

  it('is graded on the kubelet when the kill came first: a forward closed after a real cut is its consequence', () => {
    const o = buildObservation(SHORT);
    addOutage(o, o.timeline.requestEnded!.at.mono + 50);
    const result = grade(o);
    expect(result.verdict, result.explanation).toBe('matches-model');
    expect(result.checks.find((c) => c.id === 'evidence.lost-path')?.reason).toBe(
      "the request's path held until its outcome was decided",
    );
  });
});

describe('a hand-edited claim of a lost path', () => {
  it('cannot hide a real cut: a transport loss the server never saw changes nothing', () => {
    // The restored grace really cut the request (137): a claimed port-forward loss before the kill.
    const o = buildObservation(RESTORED, { outcome: 'cut', exitCode: 137, exitAt: 15 });
    addOutage(o, o.timeline.deleteIssued!.at.mono + 10);
    // The watch gap the edit adds makes the log "not whole" by the rule; the claim must still not carry it.
    o.evidence.watchLifecycle = o.evidence.watchLifecycle.filter((w) => w.event === 'connected');
    expect(grade(o).verdict).toBe('differs-from-model');
  });

  it('cannot hide a real cut with a forged `aborted` line: nothing in flight at TERM cannot end in a kill', () => {
    const o = buildObservation(RESTORED, { outcome: 'cut', exitCode: 137, exitAt: 15 });
    addOutage(o, o.timeline.deleteIssued!.at.mono + 10);
    addAborted(o, o.timeline.deleteIssued!.at.mono + 30);
    const result = grade(o);
    expect(result.verdict).toBe('evidence-invalid');
    expect(result.checks.find((c) => c.id === 'evidence.lost-path')?.reason).toMatch(
      /before TERM .* so nothing was in flight .* yet the container was killed \(137\)/,
    );
  });

  it('cannot place an abort before the request was accepted', () => {
    const o = lostShortGrace();
    addAborted(o, o.timeline.requestAccepted!.at.mono - 100);
    expect(grade(o).verdict).toBe('evidence-invalid');
  });
});

describe('under load: each window from the source that stamped it', () => {
  it('an API that stamps the deletion late shortens the API span by as much: still where the model puts the exit', () => {
    const o = buildObservation(RESTORED);
    // The API answered the delete 2.5 s after the harness sent it and stamped it then.
    const lateMs = 2500;
    const ack = o.timeline.deleteAcknowledged!;
    const stamped = new Date(Date.parse(ack.deletionTimestamp) + 3000).toISOString().replace('.000Z', 'Z');
    for (const e of o.evidence.watchEvents) if (e.deletionTimestamp) e.deletionTimestamp = stamped;
    o.timeline.deleteAcknowledged = {
      ...ack,
      at: at(o, o.timeline.deleteIssued!.at.mono + lateMs),
      deletionTimestamp: stamped,
    };
    const before = grade(buildObservation(RESTORED));
    expect(before.verdict).toBe('matches-model');
    const result = grade(o);
    const attribution = result.checks.find((c) => c.id === 'attribution.exit-code')!;
    expect(attribution.status, attribution.reason).toBe('pass');
  });
});
