// Evidence checks: is this file a faithful record of one pod's termination? A file that fails
// any of them is "evidence invalid", whatever its outcome says (hand-edited files land here).
import { oneLine } from '../../lib/terminal.ts';
import { citationChecks } from './citations.ts';
import { finalStateChecks } from './final-state.ts';
import { livePodChecks } from './live-pod.ts';
import { lostPathCheck } from './lost-path.ts';
import { requestChecks } from './request-evidence.ts';
import { MAX_JSON_DEPTH } from '../observation/read.ts';
import type { WatchEvent } from '../observation/schema.ts';
import { incompleteReasonOf } from '../observation/incomplete.ts';
import { carriesPod, describeEvent, describeLine, type LabLine } from './sources.ts';
import { TOLERANCE_SECONDS } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

/** The lab server and hook derive each line's wall time from their monotonic clock (server/events.ts), so the two differ only by rounding. */
const CONTAINER_CLOCK_DRIFT_MS = 2;
/** setTimeout may fire a millisecond early, and the harness clock rounds to microseconds. */
const TIMER_SLACK_MS = 2;

function watchBeforeRequest({ o, timeline }: Facts): Check {
  const id = 'evidence.watch-before-request';
  const { watchEstablished, requestSent } = timeline;
  // A watch the harness could not open, or a request it never sent, is the harness's failure (a
  // loaded API, Ctrl-C): nothing was observed to grade, so inconclusive; never a verdict on the file.
  if (!watchEstablished)
    return inconclusive(
      id,
      `no pod watch was established${o.run.complete ? '' : ` (${incompleteReasonOf(o.run)})`}: the harness could not observe the termination; run it again`,
    );
  if (!requestSent)
    return inconclusive(
      id,
      `no request was sent${o.run.complete ? '' : ` (${incompleteReasonOf(o.run)})`}: nothing was in flight to grade; run it again`,
    );
  return watchEstablished.at.mono <= requestSent.at.mono
    ? pass(id, 'the pod watch was running before the request was sent')
    : fail(id, 'the request was sent before the pod watch was established: early events could be missing');
}

function singlePodUid({ o, lab, lineJson }: Facts): Check {
  const id = 'evidence.single-pod-uid';
  if (!o.pod) return fail(id, 'the live pod was never captured, so its UID is unknown');
  const uid = o.pod.uid;
  const nameless = o.evidence.watchEvents.find((e) => carriesPod(e) && e.uid === null);
  if (nameless) return fail(id, `${describeEvent(nameless)} has no UID, but every pod the API sends carries one`);
  const strangeEvent = o.evidence.watchEvents.find((e) => e.uid !== null && e.uid !== uid);
  if (strangeEvent)
    return fail(
      id,
      `watch event at resourceVersion ${strangeEvent.resourceVersion} belongs to pod ${strangeEvent.uid}, not ${uid}: a replacement pod`,
    );
  // Any JSON line's podUid, whatever else the line holds.
  for (const [index, { value }] of lineJson.entries()) {
    const logged = value && typeof value === 'object' ? (value as { podUid?: unknown }).podUid : undefined;
    if (logged !== undefined && logged !== uid)
      return fail(
        id,
        `log line ${index} names pod ${oneLine(typeof logged === 'string' ? logged : (JSON.stringify(logged) ?? String(logged)))}, not ${uid}`,
      );
  }
  const named = lab.find((l) => l.fields.podName !== undefined && l.fields.podName !== o.pod!.name);
  if (named)
    return fail(
      id,
      `${describeLine(named)} names pod ${oneLine(named.fields.podName!)}, but the live pod is ${o.pod.name}`,
    );
  // The server stamps every line with its pod when it knows it: a line without is not its own.
  const stamped = lab.filter((l) => l.fields.podUid !== undefined);
  const unstamped = lab.find((l) => l.fields.podUid === undefined);
  if (stamped.length && unstamped)
    return fail(id, `${describeLine(unstamped)} carries no pod UID while ${describeLine(stamped[0]!)} does`);
  return pass(id, `every event and log line belongs to pod ${uid}`);
}

/** Every line naming one of the server's events has the fields that event has, of the types the server writes. */
function labLinesTyped(f: Facts): Check {
  const id = 'evidence.lab-lines';
  const bad = f.malformed[0];
  if (bad) return fail(id, `${describeLine(bad)} is not a line the server writes: ${oneLine(bad.problem)}`);
  const deep = f.lineJson.findIndex((l) => l.tooDeep);
  if (deep >= 0) return fail(id, `log line ${deep} is nested more than ${MAX_JSON_DEPTH} levels deep: no lab line is`);
  return pass(id, 'every lab event line has the fields the server writes');
}

function acceptedBeforeDelete({ o, timeline }: Facts): Check {
  const id = 'evidence.accepted-before-delete';
  const { requestAccepted, deleteIssued } = timeline;
  if (!requestAccepted) {
    const accepted = o.request.outcome === 'completed' || o.request.outcome === 'cut';
    return accepted
      ? fail(id, `the request is recorded as ${o.request.outcome}, but its acceptance never was`)
      : inconclusive(
          id,
          `the request was never accepted (${o.request.outcome}): nothing was in flight when the pod was deleted`,
        );
  }
  if (!deleteIssued)
    return o.run.complete
      ? fail(id, 'the pod was never deleted')
      : inconclusive(id, `the run stopped before the delete (${incompleteReasonOf(o.run)})`);
  return requestAccepted.at.mono <= deleteIssued.at.mono
    ? pass(id, 'the request was accepted before the delete was issued')
    : fail(id, 'the delete was issued before the request was accepted: the lab tests nothing');
}

function deleteDelay({ o, deleteDelayMs: observed, timeline }: Facts): Check {
  const id = 'evidence.delete-delay';
  if (observed === null) return inconclusive(id, 'no acceptance and delete to measure the delay between');
  const asked = o.scenario.deleteDelayMs;
  if (observed < asked - TIMER_SLACK_MS)
    return fail(
      id,
      `the harness clock puts the delete ${Math.round(observed)} ms after the acceptance, but the scenario says the harness waited ${asked} ms`,
    );
  if (observed > asked + TOLERANCE_SECONDS * 1000) {
    // A delete the API refused and the runner tried again comes late for a recorded reason; the
    // model takes the delay it really waited, so the comparison still holds.
    const issued = timeline.deleteIssued!.at.mono;
    const failedAttempts = o.cleanup.filter(
      (c) => c.action.startsWith('delete attempt') && !c.ok && c.at.mono <= issued,
    ).length;
    if (failedAttempts)
      return pass(
        id,
        `the delete came ${Math.round(observed)} ms after the acceptance, later than the ${asked} ms asked because ${failedAttempts} attempt(s) failed first; the model takes the real delay`,
      );
    return inconclusive(
      id,
      `the delete came ${Math.round(observed)} ms after the acceptance, not the ${asked} ms the scenario asked: the run did not follow its scenario`,
    );
  }
  return pass(
    id,
    `the delete came ${Math.round(observed)} ms after the acceptance (the scenario asked for ${asked} ms)`,
  );
}

/** The runner notes the watch established right after the watch records its connection. */
const WATCH_ESTABLISHED_SLACK_MS = 1000;

function clockMonotonic(f: Facts): Check {
  const id = 'evidence.clock-monotonic';
  const t = f.timeline;
  const ordered: [string, number | undefined][] = [
    ['watch established', t.watchEstablished?.at.mono],
    ['request sent', t.requestSent?.at.mono],
    ['request accepted', t.requestAccepted?.at.mono],
    ['delete issued', t.deleteIssued?.at.mono],
    ['delete acknowledged', t.deleteAcknowledged?.at.mono],
  ];
  if (t.requestEnded && t.requestSent && t.requestEnded.at.mono < t.requestSent.at.mono)
    return fail(id, 'the request ended before it was sent');
  if (t.requestEnded && t.requestAccepted && t.requestEnded.at.mono < t.requestAccepted.at.mono)
    return fail(id, 'the request ended before it was accepted');
  // The runner sends the request only once the pod is Ready (the one watch may start earlier, at creation).
  if (t.podReady && t.requestSent && t.podReady.at.mono > t.requestSent.at.mono)
    return fail(id, 'the request was sent before the pod was Ready, but the runner waits for Ready first');
  // The watch is established when its own life says it connected, and the timeline says so just after.
  const connected = f.o.evidence.watchLifecycle.find((w) => w.event === 'connected');
  if (t.watchEstablished) {
    if (!connected)
      return fail(id, "the timeline has the watch established, but the watch's own lifecycle never connected");
    const after = t.watchEstablished.at.mono - connected.at.mono;
    if (after < 0 || after > WATCH_ESTABLISHED_SLACK_MS)
      return fail(
        id,
        `the timeline puts the watch established ${Math.round(after)} ms from the watch's own "connected" entry; they are the same moment`,
      );
  }
  if (t.watchEstablished && f.o.pod && f.o.pod.capturedAt.mono < t.watchEstablished.at.mono)
    return fail(id, 'the live pod was captured before the watch was established');
  const span = harnessSpanProblem(f);
  if (span) return fail(id, span);
  const containerClock = containerClockProblem(f);
  if (containerClock) return fail(id, containerClock);
  let previous: [string, number] | null = null;
  for (const [name, mono] of ordered) {
    if (mono === undefined) continue;
    if (previous && mono < previous[1])
      return fail(id, `the harness clock runs backwards: ${name} is before ${previous[0]}`);
    previous = [name, mono];
  }
  for (const [what, times] of [
    ['watch events', f.o.evidence.watchEvents.map((e) => e.receivedAt.mono)],
    ['log lines', f.o.evidence.logLines.map((l) => l.receivedAt.mono)],
    ['pod reads', f.o.evidence.podReads.map((r) => r.at.mono)],
  ] as const) {
    const back = times.findIndex((m, i) => i > 0 && m < times[i - 1]!);
    if (back > 0) return fail(id, `the harness clock runs backwards in the ${what} (entry ${back})`);
  }
  return pass(id, 'the harness clock only moves forward');
}

/** wall = the run's origin + mono for every harness time (the clock rounds each to a millisecond). */
const HARNESS_ORIGIN_SLACK_MS = 2;
/** observedAt is written at the very end; nothing the harness recorded comes after it. */
const OBSERVED_AT_SLACK_MS = 1000;

/** Every harness time in the file, wherever it sits: each is a { mono, wall } pair. */
function harnessTimes(
  value: unknown,
  found: { mono: number; wall: string }[] = [],
  depth = 0,
): { mono: number; wall: string }[] {
  if (depth > MAX_JSON_DEPTH || value === null || typeof value !== 'object') return found;
  if (Array.isArray(value)) {
    for (const v of value) harnessTimes(v, found, depth + 1);
    return found;
  }
  const v = value as Record<string, unknown>;
  if (typeof v.mono === 'number' && typeof v.wall === 'string' && ownKeyCount(v) === 2) {
    found.push({ mono: v.mono, wall: v.wall });
    return found;
  }
  for (const key in v) harnessTimes(v[key], found, depth + 1);
  return found;
}

/** Object.keys(v).length without the array (a parsed file's objects have no inherited enumerable keys). */
function ownKeyCount(v: object): number {
  let count = 0;
  for (const _ in v) count++;
  return count;
}

/**
 * The harness's times are bounded by the run's own span: one origin (wall − mono) for all, and none
 * after the run was observed. A mono time moved by years is caught here, whatever its wall says.
 */
function harnessSpanProblem({ o }: Facts): string | null {
  const times = harnessTimes({ timeline: o.timeline, pod: o.pod, evidence: o.evidence, cleanup: o.cleanup });
  if (!times.length) return null;
  const walls = times.map((t) => wallMs(t.wall));
  const origins = times.map((t, i) => walls[i]! - t.mono);
  const low = Math.min(...origins),
    high = Math.max(...origins);
  if (high - low > HARNESS_ORIGIN_SLACK_MS) {
    // The odd one is farthest from the others' common origin (the median), whichever way it was moved.
    const median = [...origins].sort((a, b) => a - b)[Math.floor(origins.length / 2)]!;
    const odd =
      times[origins.reduce((far, x, i) => (Math.abs(x - median) > Math.abs(origins[far]! - median) ? i : far), 0)]!;
    return `the harness time ${odd.mono} ms (${oneLine(odd.wall)}) is not on the run's one clock: its wall and monotonic parts disagree with the others by ${Math.round(high - low)} ms`;
  }
  const end = wallMs(o.run.observedAt);
  // The first of the latest, as a scan that keeps the earlier on a tie.
  const latestAt = walls.reduce((a, b, i) => (b > walls[a]! ? i : a), 0);
  const latest = times[latestAt]!;
  if (walls[latestAt]! > end + OBSERVED_AT_SLACK_MS)
    return `the harness time ${latest.mono} ms (${oneLine(latest.wall)}) is after the run was observed (${oneLine(o.run.observedAt)}): beyond the run's own span`;
  return null;
}

/** Each process in the container has one clock: wall = origin + mono, and mono only grows. */
function containerClockProblem(f: Facts): string | null {
  const byProcess = new Map<unknown, LabLine[]>();
  for (const l of f.lab) {
    const lines = byProcess.get(l.fields.pid);
    if (lines) lines.push(l);
    else byProcess.set(l.fields.pid, [l]);
  }
  for (const lines of byProcess.values()) {
    const origin = wallMs(lines[0]!.time) - lines[0]!.mono;
    for (const [i, l] of lines.entries()) {
      if (i > 0 && l.mono < lines[i - 1]!.mono)
        return `the container's clock runs backwards: ${describeLine(l)} is before ${describeLine(lines[i - 1]!)}`;
      if (Math.abs(wallMs(l.time) - l.mono - origin) > CONTAINER_CLOCK_DRIFT_MS)
        return `${describeLine(l)}'s wall time and monotonic time disagree with ${describeLine(lines[0]!)} of the same process`;
    }
  }
  return null;
}

/**
 * The watch's own life accounts for every event's arrival: events come only while it is connected,
 * so after a drop none arrives until it resumed or relisted (and none after it gave up).
 */
function watchLife({ o }: Facts, fileVersion: number): Check {
  const id = 'evidence.watch-life';
  const life = o.evidence.watchLifecycle;
  let down: (typeof life)[number] | null = null;
  const events = [...o.evidence.watchEvents].sort((a, b) => a.receivedAt.mono - b.receivedAt.mono);
  let next = 0;
  let relisted = false;
  for (const entry of [...life].sort((a, b) => a.at.mono - b.at.mono)) {
    while (next < events.length && events[next]!.receivedAt.mono < entry.at.mono) {
      const answer = down !== null && relistAnswer(events[next]!, entry, fileVersion);
      relisted ||= answer;
      if (down && !answer)
        return fail(
          id,
          `${describeEvent(events[next]!)} arrived after the watch ${down.event === 'gave-up' ? 'gave up' : 'dropped'} at ${down.at.mono} ms and before it ${down.event === 'gave-up' ? 'could come back' : 'resumed'}: a watch delivers nothing while it is down`,
        );
      next++;
    }
    if (entry.event === 'dropped' || entry.event === 'gave-up') down = entry;
    else down = null;
  }
  if (down && next < events.length)
    return fail(
      id,
      `${describeEvent(events[next]!)} arrived after the watch ${down.event === 'gave-up' ? 'gave up' : 'dropped'} at ${down.at.mono} ms, and its life records no resume, relist or give-up after it`,
    );
  return pass(
    id,
    life.some((w) => w.event === 'dropped')
      ? `every watch event arrived while the watch was connected${relisted ? ", or was its 410 relist's answer (recorded before the relist, as runners before version 3 did)" : ''}`
      : 'the watch never dropped',
  );
}

/**
 * The runner of files before version 3 (harness/run/watch.ts until 04c832c) recorded a 410 relist's answer
 * as watch events (MODIFIED, or DELETED at the list's version when the pod was gone), stamped as the list
 * came, and its `expired-relisted` entry only once the new watch was answered: those events come after the
 * drop and before the entry, at versions no newer than the list's. Later runners record them as pod reads.
 */
function relistAnswer(
  e: WatchEvent,
  entry: Facts['o']['evidence']['watchLifecycle'][number],
  fileVersion: number,
): boolean {
  if (fileVersion >= 3 || entry.event !== 'expired-relisted' || (e.type !== 'MODIFIED' && e.type !== 'DELETED'))
    return false;
  const [version, listed] = [Number(e.resourceVersion), Number(entry.resourceVersion)];
  return Number.isSafeInteger(version) && Number.isSafeInteger(listed) && version <= listed;
}

/** A lost path is the outcome's business (inconclusive there); here only a contradiction counts. */
function lostPathEvidence(f: Facts): Check {
  const check = lostPathCheck(f);
  return check.status === 'inconclusive'
    ? pass(check.id, `the harness lost the request's path, and the server's log agrees: ${check.reason}`)
    : check;
}

export function evidenceChecks(f: Facts, fileVersion: number): Check[] {
  return [
    watchBeforeRequest(f),
    labLinesTyped(f),
    singlePodUid(f),
    ...livePodChecks(f),
    acceptedBeforeDelete(f),
    deleteDelay(f),
    ...finalStateChecks(f),
    ...citationChecks(f),
    ...requestChecks(f, fileVersion),
    clockMonotonic(f),
    watchLife(f, fileVersion),
    lostPathEvidence(f),
  ];
}
