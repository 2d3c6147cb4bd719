// What the kubelet did, as the evidence shows it, and the cross-examination of those times.
// The model conditions on TERM as the server logged it (theory.ts ObservedKubelet), placed after the
// delete by the server's own `accepted` line and the delay the harness waited. Because a hand-edited
// TERM or hook start would move the prediction, each is held here against every other clock that saw
// it: the runtime's stamp on the line, the harness's receipt of it, the Killing event's second, the
// hook's length and the delete itself.
import { describeLine, type LabLine } from './sources.ts';
import { hookDurationSeconds } from '../scenario/schema.ts';
import {
  type DeadlineTiming,
  KUBELET_EXTRA_DELAY_SECONDS,
  type KubeletRules,
  TOLERANCE_SECONDS,
  type ObservedKubelet,
} from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

/** Rounding of the lab's millisecond times, and a Node process's wall clock drifting from the system's. */
const CLOCK_SLACK_MS = 50;
/** The runtime's exec of a hook program before its first line (seen up to 1.3 s on the loaded real node). */
const HOOK_LAUNCH_SLACK_MS = 2_000;

export interface Anchor {
  accepted: LabLine;
  /** The delete on the server's clock (wall ms): its accepted line plus the delay the harness waited. */
  deleteWallMs: number;
  /** Harness mono → server wall: add this; the true mapping is later by 0..rtt (the acceptance's round trip). */
  harnessToServerMs: number;
  rttMs: number;
}

/** The server's accepted line for this request, and with it the harness's clock on the server's. */
export function anchor({ o, deleteDelayMs: delay, lab, timeline }: Facts): Anchor | null {
  const { requestAccepted, requestSent } = timeline;
  if (!requestAccepted || !requestSent || delay === null) return null;
  const accepted = lab.find((l) => l.event === 'accepted' && l.fields.id === o.request.id);
  if (!accepted) return null;
  const acceptedWall = wallMs(accepted.time);
  if (!Number.isFinite(acceptedWall)) return null;
  return {
    accepted,
    deleteWallMs: acceptedWall + delay,
    harnessToServerMs: acceptedWall - requestAccepted.at.mono,
    rttMs: Math.max(0, requestAccepted.at.mono - requestSent.at.mono),
  };
}

const firstLine = (f: Facts, event: string, pid: unknown) =>
  f.lab.find((l) => l.event === event && (pid === undefined || l.fields.pid === pid));

/** Seconds after the delete on the server's clock: same-process lines by their monotonic time, others by wall. */
function sinceDeleteOf(a: Anchor, l: LabLine): number {
  if (l.fields.pid !== undefined && l.fields.pid === a.accepted.fields.pid)
    return (l.mono - a.accepted.mono) / 1000 - (a.deleteWallMs - wallMs(a.accepted.time)) / 1000;
  return (wallMs(l.time) - a.deleteWallMs) / 1000;
}

/**
 * The hook's first line, less an exec hook program's own age at it (`procAgeMs` from the shell hook;
 * a Node hook program in a process of its own has a monotonic clock that starts with it): the latest
 * the kill sequence can have begun.
 */
function hookStartOf(a: Anchor, hook: LabLine): number {
  const ownProcess = hook.fields.pid !== undefined && hook.fields.pid !== a.accepted.fields.pid;
  const age = hook.fields.kind !== 'exec' ? 0 : (numberField(hook, 'procAgeMs') ?? (ownProcess ? hook.mono : 0));
  return sinceDeleteOf(a, hook) - (age > 0 ? age / 1000 : 0);
}
const numberField = (l: LabLine, name: string) => {
  const v = (l.fields as Record<string, unknown>)[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The first Killing event with a time, in seconds after the delete on the server's clock (the node's). */
function killingSecond({ o }: Facts, a: Anchor): { at: number; time: string } | null {
  const killing = o.evidence.podEvents.find((e) => e.reason === 'Killing' && e.time !== null);
  const ms = killing ? wallMs(killing.time!) : Number.NaN;
  return Number.isFinite(ms) ? { at: (ms - a.deleteWallMs) / 1000, time: killing!.time! } : null;
}

/**
 * The earliest the kill sequence can start, in seconds after the delete: the delete itself, or the
 * pod's active deadline when that passed before it (deadline.ts places it).
 */
const killFloor = (deadline: DeadlineTiming | null) => Math.min(0, deadline?.passesAt ?? 0);

/**
 * TERM and the bounds on the kill sequence's start, after the delete, or null when the evidence shows
 * no TERM: then the model keeps its window. Only the server's first TERM line counts (the one the
 * timeline cites), and the first hook-start line.
 */
export function observedKubelet(f: Facts, deadline: DeadlineTiming | null = null): ObservedKubelet | null {
  const a = anchor(f);
  if (!a) return null;
  const term = firstLine(f, 'signal', a.accepted.fields.pid);
  if (!term || f.timeline.termReceived === null) return null;
  const hook = firstLine(f, 'hook-start', undefined);
  const killing = killingSecond(f, a);
  const notAfter = [hook ? hookStartOf(a, hook) : null, killing ? killing.at + 1 : null].filter(
    (x): x is number => x !== null,
  );
  return {
    termAt: sinceDeleteOf(a, term),
    startNotBefore: Math.max(killFloor(deadline), killing?.at ?? killFloor(deadline)),
    startNotAfter: notAfter.length ? Math.min(...notAfter) : null,
    hookRequestStartAt: hook && hook.fields.kind === 'httpGet' ? sinceDeleteOf(a, hook) : null,
  };
}

/** Each line the model's times rest on, against the clocks that saw it written. */
function lineProblem({ o }: Facts, a: Anchor, l: LabLine): string | null {
  const written = wallMs(l.time);
  const raw = o.evidence.logLines[l.line]!;
  // The harness received the line after it was written: on the server's clock, no later than its receipt plus the round trip.
  const receivedBy = raw.receivedAt.mono + a.harnessToServerMs + a.rttMs + CLOCK_SLACK_MS;
  if (written > receivedBy)
    return `${describeLine(l)} was written at ${l.time}, ${((written - receivedBy + CLOCK_SLACK_MS) / 1000).toFixed(3)}s after the harness received it (at ${raw.receivedAt.mono} ms on its clock, placed on the server's by the request's acceptance)`;
  if (raw.apiTime !== null) {
    const stamped = wallMs(raw.apiTime);
    if (!Number.isFinite(stamped))
      return `${describeLine(l)}'s runtime stamp ${JSON.stringify(raw.apiTime)} is not a time`;
    if (stamped < written - CLOCK_SLACK_MS)
      return `${describeLine(l)} says it was written at ${l.time}, but the runtime stamped it at ${raw.apiTime}, before that`;
    if (stamped > receivedBy)
      return `the runtime stamped ${describeLine(l)} at ${raw.apiTime}, after the harness received it (at ${raw.receivedAt.mono} ms on its clock)`;
  }
  return null;
}

const secs = (x: number) => `${x.toFixed(3)}s`;

/**
 * The observed TERM and the hook's start, held against the delete, the Killing event, the hook's length and
 * the runtime's and harness's clocks. `grace` is the model's (Prediction.graceSeconds, from theory.ts graceOf):
 * the delete's, or the pod's own when the deadline started the kill. `rules`: the kubelet's of the cluster's
 * minor (theory.ts rulesFor), whose deadline reaction bounds a kill the deadline began.
 */
export function kubeletTimes(f: Facts, deadline: DeadlineTiming | null, grace: number, rules: KubeletRules): Check {
  const id = 'evidence.kubelet-times';
  const a = anchor(f);
  const observed = observedKubelet(f, deadline);
  if (!a || !observed)
    return pass(id, 'no observed TERM to condition the model on: it keeps its window after the delete');
  const term = firstLine(f, 'signal', a.accepted.fields.pid)!;
  const hook = firstLine(f, 'hook-start', undefined) ?? null;
  for (const l of [a.accepted, hook, term]) {
    const problem = l ? lineProblem(f, a, l) : null;
    if (problem) return fail(id, problem);
  }
  const slack = CLOCK_SLACK_MS / 1000;
  const T = observed.termAt;
  const h = hook ? sinceDeleteOf(a, hook) : null;
  const started = hook ? hookStartOf(a, hook) : null;
  // Nothing of the kubelet's comes before the delete (which the round trip places at or after the anchor's),
  // or before the pod's active deadline when that passed first (startTime + activeDeadlineSeconds).
  const floor = killFloor(deadline);
  const before = floor < 0 ? `the pod's active deadline (${secs(-floor)} before the delete)` : 'the delete';
  if (T < floor - slack)
    return fail(
      id,
      `${describeLine(term)} puts TERM ${secs(floor - T)} before ${before}${floor === 0 && deadline ? ", and before the pod's active deadline had passed" : ''}`,
    );
  if (h !== null && h < floor - slack)
    return fail(id, `${describeLine(hook!)} puts the hook's start ${secs(floor - h)} before ${before}`);
  // executePreStopHook: TERM comes once the hook returns or the grace runs out, later only by the delay newer kubelets add.
  const length = f.o.scenario.preStop.kind === 'none' ? 0 : hookDurationSeconds(f.o.scenario.preStop);
  const hookWait = Math.min(length, grace);
  if (started !== null) {
    // The hook runs its length after its start; cut at the grace, it was timed from the kill sequence's
    // start, which comes before the hook's own start by the runtime's launch of it.
    const launch = HOOK_LAUNCH_SLACK_MS / 1000;
    const span = T - started;
    const least = Math.min(length, grace - launch);
    if (span < least - slack)
      return fail(
        id,
        `${describeLine(term)} (TERM) comes ${secs(span)} after the hook began by ${describeLine(hook!)}, but the kubelet waits for the hook (${length}s, at most the ${grace}s grace) before TERM`,
      );
    const most = Math.min(length + launch, grace) + KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;
    // Later is a kubelet that stalled before TERM (paused, starved: 6.9 s for a 3 s hook with 40 students on
    // one sim), which an edit could also give: no proof either way, and no time the model can lean on.
    if (span > most)
      return inconclusive(
        id,
        `${describeLine(term)} (TERM) comes ${secs(span)} after the hook began by ${describeLine(hook!)}, more than the hook (${length}s, at most the ${grace}s grace) and the ${KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS}s a kubelet may add: the kubelet was delayed before TERM (paused or starved), or the times were edited; the kill cannot be placed from them`,
      );
  }
  // The Killing event is recorded as the kill sequence begins (its time is whole seconds): before the hook and TERM, and not long before.
  const killing = killingSecond(f, a);
  if (killing) {
    const first = started !== null && started < T ? { at: started, line: hook! } : { at: T, line: term };
    if (killing.at > first.at + slack)
      return fail(
        id,
        `the Killing event (${killing.time}) is after ${describeLine(first.line)}, ${secs(killing.at - first.at)} after the kill sequence began`,
      );
    const afterHook = f.o.scenario.preStop.kind === 'none' ? 0 : KUBELET_EXTRA_DELAY_SECONDS;
    const byHook = started === null ? Number.NEGATIVE_INFINITY : started - HOOK_LAUNCH_SLACK_MS / 1000;
    const startBy = Math.max(byHook, T - hookWait - afterHook - TOLERANCE_SECONDS);
    // A kubelet stalled between recording Killing and acting on it (paused, starved) starts late: that is
    // the kubelet's own delay, not false evidence, but neither can the model lean on times it cannot place.
    if (startBy > killing.at + 1 + slack)
      return inconclusive(
        id,
        `${describeLine(byHook >= startBy ? hook! : term)} puts the kill sequence's start ${secs(startBy - killing.at - 1)} after the second of the Killing event (${killing.time}) had ended: the kubelet was delayed between recording Killing and acting (paused or starved), or the times were edited; the kill cannot be placed from them`,
      );
  }
  // Before the delete, only the deadline's sync can have begun the kill: within its ticker and relist of it.
  const start = started !== null && started < T ? started : T - hookWait;
  if (floor < 0 && start < 0 && start > floor + rules.deadlineReactionSeconds + TOLERANCE_SECONDS) {
    return inconclusive(
      id,
      `the kill sequence began ${secs(start - floor)} after the pod's active deadline passed (${describeLine(started !== null && started < T ? hook! : term)}), later than the kubelet's sync ticker and relist (${rules.deadlineReactionSeconds}s) allow: the kubelet was starved or paused, or the times were edited; the kill cannot be placed from them`,
    );
  }
  return pass(
    id,
    `TERM ${T < 0 ? `${secs(-T)} before` : `${secs(T)} after`} the delete by the server's clock agrees with the runtime's stamps, the harness's receipt${hook ? ", the hook's start" : ''}${killing ? ' and the Killing event' : ''}`,
  );
}
