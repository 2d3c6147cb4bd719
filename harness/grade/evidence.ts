// Evidence checks: is this file a faithful record of one pod's termination? A file that fails
// any of them is "evidence invalid", whatever its outcome says (hand-edited files land here).
import { oneLine, type Observation } from '../observation.ts';
import { describePreStop, hookDurationSeconds, type PreStop } from '../scenario/schema.ts';
import { citationChecks } from './citations.ts';
import { finalStateChecks } from './final-state.ts';
import { requestChecks } from './request-evidence.ts';
import { describeCitation, describeLine, labLines, stateSources, type LabLine } from './sources.ts';
import { TOLERANCE_SECONDS } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';

/** A process's wall clock may be stepped a little (NTP) against its monotonic clock; never by seconds. */
const CONTAINER_CLOCK_DRIFT_MS = 500;
/** setTimeout may fire a millisecond early, and the harness clock rounds to microseconds. */
const TIMER_SLACK_MS = 2;

function watchBeforeRequest(o: Observation): Check {
  const id = 'evidence.watch-before-request';
  const { watchEstablished, requestSent } = o.timeline;
  if (!watchEstablished) return fail(id, 'no pod watch was established: the termination was not observed');
  if (!requestSent) return fail(id, 'no request was sent');
  return watchEstablished.at.mono <= requestSent.at.mono
    ? pass(id, 'the pod watch was running before the request was sent')
    : fail(id, 'the request was sent before the pod watch was established: early events could be missing');
}

function singlePodUid(o: Observation): Check {
  const id = 'evidence.single-pod-uid';
  if (!o.pod) return fail(id, 'the live pod was never captured, so its UID is unknown');
  const uid = o.pod.uid;
  const strangeEvent = o.evidence.watchEvents.find((e) => e.uid !== null && e.uid !== uid);
  if (strangeEvent) return fail(id, `watch event at resourceVersion ${strangeEvent.resourceVersion} belongs to pod ${strangeEvent.uid}, not ${uid}: a replacement pod`);
  for (const [index, line] of o.evidence.logLines.entries()) {
    const logged = podUidOfLogLine(line.text);
    if (logged !== undefined && logged !== uid) return fail(id, `log line ${index} names pod ${oneLine(String(logged))}, not ${uid}`);
  }
  const lab = labLines(o);
  const named = lab.find((l) => l.fields.podName !== undefined && l.fields.podName !== o.pod!.name);
  if (named) return fail(id, `${describeLine(named)} names pod ${oneLine(String(named.fields.podName))}, but the live pod is ${o.pod.name}`);
  // The server stamps every line with its pod when it knows it: a line without is not its own.
  const stamped = lab.filter((l) => l.fields.podUid !== undefined);
  const unstamped = lab.find((l) => l.fields.podUid === undefined);
  if (stamped.length && unstamped) return fail(id, `${describeLine(unstamped)} carries no pod UID while ${describeLine(stamped[0]!)} does`);
  return pass(id, `every event and log line belongs to pod ${uid}`);
}

/** The podUid field of a JSON log line, whatever else the line holds. */
function podUidOfLogLine(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    return (JSON.parse(text) as { podUid?: unknown } | null)?.podUid;
  } catch {
    return undefined;
  }
}

/** The hook the live pod carries, in the scenario's own terms, or a sentence saying why it is none the lab renders. */
function liveHook(lifecycle: Record<string, unknown> | null): PreStop | string {
  const preStop = lifecycle?.preStop as Record<string, any> | undefined;
  if (!preStop) return { kind: 'none' };
  const command = preStop.exec?.command;
  if (Array.isArray(command) && command.length === 3 && command[1] === 'sleep' && /^\d+$/.test(String(command[2]))) {
    return { kind: 'exec-sleep', seconds: Number(command[2]) / 1000 };
  }
  if (preStop.sleep && Number.isInteger(preStop.sleep.seconds)) return { kind: 'sleep-action', seconds: preStop.sleep.seconds };
  const path = preStop.httpGet?.path;
  const ms = typeof path === 'string' ? /^\/hook\/prestop\?ms=(\d+)$/.exec(path)?.[1] : undefined;
  if (ms !== undefined) return { kind: 'httpGet', ms: Number(ms) };
  return `a preStop hook the lab does not render (${oneLine(JSON.stringify(preStop), 80)})`;
}

function liveLifecycle(o: Observation): Check {
  const id = 'evidence.live-lifecycle';
  if (!o.pod) return fail(id, 'the live pod was not read before the delete');
  const deleted = o.timeline.deleteIssued;
  if (deleted && o.pod.capturedAt.mono > deleted.at.mono) return fail(id, 'the pod was read after the delete was issued, not before');
  if (o.pod.terminationGracePeriodSeconds !== o.scenario.terminationGracePeriodSeconds) {
    return fail(id, `the live pod's grace is ${o.pod.terminationGracePeriodSeconds}s but the scenario asked for ${o.scenario.terminationGracePeriodSeconds}s`);
  }
  if (!o.pod.containers.length) return fail(id, 'the live pod was captured with no containers');
  const hooks = o.pod.containers.map((c) => liveHook(c.lifecycle));
  const hasPreStop = hooks.some((h) => typeof h === 'string' || h.kind !== 'none');
  if (hasPreStop !== (o.scenario.preStop.kind !== 'none')) {
    return fail(id, hasPreStop ? 'the live pod has a preStop hook the scenario does not' : 'the scenario has a preStop hook the live pod lacks');
  }
  const hook = hooks[0]!;
  if (typeof hook === 'string') return fail(id, `the live pod has ${hook}`);
  if (describePreStop(hook) !== describePreStop(o.scenario.preStop)) {
    return fail(id, `the live pod's hook is ${describePreStop(hook)} but the scenario says ${describePreStop(o.scenario.preStop)}`);
  }
  // The hook's own log lines say how long it was asked to run.
  const wantMs = hookDurationSeconds(o.scenario.preStop) * 1000;
  for (const l of labLines(o).filter((x) => x.event === 'hook-start' || x.event === 'hook-end')) {
    if (o.scenario.preStop.kind === 'sleep-action' || o.scenario.preStop.kind === 'none') return fail(id, `${describeLine(l)} shows a hook in the container, but the scenario's hook (${describePreStop(o.scenario.preStop)}) leaves none`);
    if (l.fields.ms !== wantMs) return fail(id, `${describeLine(l)} says the hook was asked for ${oneLine(String(l.fields.ms))} ms, the scenario for ${wantMs} ms`);
    const kind = o.scenario.preStop.kind === 'exec-sleep' ? 'exec' : 'httpGet';
    if (l.fields.kind !== kind) return fail(id, `${describeLine(l)} says a ${oneLine(String(l.fields.kind))} hook ran, the scenario's is ${kind}`);
  }
  const listening = labLines(o).find((l) => l.event === 'listening');
  if (!listening && !o.evidence.logEndedEarly && o.run.complete) return fail(id, 'the container log has no line of the server starting, so nothing says how it ran');
  if (listening && listening.fields.mode !== o.scenario.mode) return fail(id, `${describeLine(listening)} says the server ran in ${oneLine(String(listening.fields.mode))} mode, the scenario says ${o.scenario.mode}`);
  return pass(id, `grace and hook (${describePreStop(hook)}) were read from the live pod before the delete and match the scenario and the hook's log`);
}

/** The grace the model uses comes from the delete response; every other source must agree with it. */
function deleteGrace(o: Observation): Check {
  const id = 'evidence.delete-grace';
  const ack = o.timeline.deleteAcknowledged;
  if (!ack) return o.timeline.deleteIssued ? fail(id, 'the delete was issued but its response is not in the file') : pass(id, 'no delete was issued');
  // termlab's delete sends no grace of its own: the API takes the pod's.
  const spec = o.pod?.terminationGracePeriodSeconds ?? o.scenario.terminationGracePeriodSeconds;
  const expected = Math.max(0, spec);
  if (ack.deletionGracePeriodSeconds !== expected) {
    return fail(id, `the delete response says grace ${ack.deletionGracePeriodSeconds}s, but the live pod's spec says ${spec}s and termlab sends no grace of its own`);
  }
  let sawDeletion = false;
  for (const source of stateSources(o)) {
    const grace = source.deletionGracePeriodSeconds;
    if (source.deletionTimestamp !== null) sawDeletion = true;
    // 0 is the kubelet's own final delete once the containers are gone.
    if (grace !== null && grace !== ack.deletionGracePeriodSeconds && grace !== 0) {
      return fail(id, `${describeCitation(source.citation)} says grace ${grace}s, the delete response ${ack.deletionGracePeriodSeconds}s`);
    }
    if (source.deletionTimestamp !== null && source.receivedAt < (o.timeline.deleteIssued?.at.mono ?? 0)) {
      return fail(id, `${describeCitation(source.citation)} shows the deletion before the harness issued the delete`);
    }
  }
  const deletionTimestamps = new Set(stateSources(o).map((s) => s.deletionTimestamp).filter((t) => t !== null));
  if (deletionTimestamps.size && !deletionTimestamps.has(ack.deletionTimestamp)) {
    return fail(id, `the delete response's deletionTimestamp ${ack.deletionTimestamp} is in no watch event or pod read`);
  }
  return pass(id, `grace ${ack.deletionGracePeriodSeconds}s: the delete response, the live pod${sawDeletion ? ' and the watch' : ''} agree`);
}

function acceptedBeforeDelete(o: Observation): Check {
  const id = 'evidence.accepted-before-delete';
  const { requestAccepted, deleteIssued } = o.timeline;
  if (!requestAccepted) {
    const accepted = o.request.outcome === 'completed' || o.request.outcome === 'cut';
    return accepted
      ? fail(id, `the request is recorded as ${o.request.outcome}, but its acceptance never was`)
      : inconclusive(id, `the request was never accepted (${o.request.outcome}): nothing was in flight when the pod was deleted`);
  }
  if (!deleteIssued) return fail(id, 'the pod was never deleted');
  return requestAccepted.at.mono <= deleteIssued.at.mono
    ? pass(id, 'the request was accepted before the delete was issued')
    : fail(id, 'the delete was issued before the request was accepted: the lab tests nothing');
}

/** The harness waits deleteDelayMs after the acceptance; the model takes the delay it really waited. */
export function observedDeleteDelayMs(o: Observation): number | null {
  const { requestAccepted, deleteIssued } = o.timeline;
  return requestAccepted && deleteIssued ? deleteIssued.at.mono - requestAccepted.at.mono : null;
}

function deleteDelay(o: Observation): Check {
  const id = 'evidence.delete-delay';
  const observed = observedDeleteDelayMs(o);
  if (observed === null) return inconclusive(id, 'no acceptance and delete to measure the delay between');
  const asked = o.scenario.deleteDelayMs;
  if (observed < asked - TIMER_SLACK_MS) return fail(id, `the harness clock puts the delete ${Math.round(observed)} ms after the acceptance, but the scenario says the harness waited ${asked} ms`);
  if (observed > asked + TOLERANCE_SECONDS * 1000) return inconclusive(id, `the delete came ${Math.round(observed)} ms after the acceptance, not the ${asked} ms the scenario asked: the run did not follow its scenario`);
  return pass(id, `the delete came ${Math.round(observed)} ms after the acceptance (the scenario asked for ${asked} ms)`);
}

function clockMonotonic(o: Observation): Check {
  const id = 'evidence.clock-monotonic';
  const t = o.timeline;
  const ordered: [string, number | undefined][] = [
    ['watch established', t.watchEstablished?.at.mono],
    ['request sent', t.requestSent?.at.mono],
    ['request accepted', t.requestAccepted?.at.mono],
    ['delete issued', t.deleteIssued?.at.mono],
    ['delete acknowledged', t.deleteAcknowledged?.at.mono],
  ];
  if (t.requestEnded && t.requestSent && t.requestEnded.at.mono < t.requestSent.at.mono) return fail(id, 'the request ended before it was sent');
  if (t.requestEnded && t.requestAccepted && t.requestEnded.at.mono < t.requestAccepted.at.mono) return fail(id, 'the request ended before it was accepted');
  if (t.podReady && t.watchEstablished && t.podReady.at.mono > t.watchEstablished.at.mono) return fail(id, 'the pod was Ready after the termination watch was established, but the runner waits for Ready first');
  if (t.watchEstablished && o.pod && o.pod.capturedAt.mono < t.watchEstablished.at.mono) return fail(id, 'the live pod was captured before the watch was established');
  const containerClock = containerClockProblem(o);
  if (containerClock) return fail(id, containerClock);
  let previous: [string, number] | null = null;
  for (const [name, mono] of ordered) {
    if (mono === undefined) continue;
    if (previous && mono < previous[1]) return fail(id, `the harness clock runs backwards: ${name} is before ${previous[0]}`);
    previous = [name, mono];
  }
  for (const [what, times] of [
    ['watch events', o.evidence.watchEvents.map((e) => e.receivedAt.mono)],
    ['log lines', o.evidence.logLines.map((l) => l.receivedAt.mono)],
    ['pod reads', o.evidence.podReads.map((r) => r.at.mono)],
  ] as const) {
    const back = times.findIndex((m, i) => i > 0 && m < times[i - 1]!);
    if (back > 0) return fail(id, `the harness clock runs backwards in the ${what} (entry ${back})`);
  }
  return pass(id, 'the harness clock only moves forward');
}

/** Each process in the container has one clock: wall = origin + mono, and mono only grows. */
function containerClockProblem(o: Observation): string | null {
  const byProcess = new Map<unknown, LabLine[]>();
  for (const l of labLines(o)) byProcess.set(l.fields.pid, [...(byProcess.get(l.fields.pid) ?? []), l]);
  for (const lines of byProcess.values()) {
    const origin = Date.parse(lines[0]!.time) - lines[0]!.mono;
    for (const [i, l] of lines.entries()) {
      if (i > 0 && l.mono < lines[i - 1]!.mono) return `the container's clock runs backwards: ${describeLine(l)} is before ${describeLine(lines[i - 1]!)}`;
      if (Math.abs(Date.parse(l.time) - l.mono - origin) > CONTAINER_CLOCK_DRIFT_MS) return `${describeLine(l)}'s wall time and monotonic time disagree with ${describeLine(lines[0]!)} of the same process`;
    }
  }
  return null;
}

export function evidenceChecks(o: Observation, fileVersion: number): Check[] {
  return [
    watchBeforeRequest(o), singlePodUid(o), liveLifecycle(o), deleteGrace(o), acceptedBeforeDelete(o), deleteDelay(o),
    ...finalStateChecks(o), ...citationChecks(o), ...requestChecks(o, fileVersion), clockMonotonic(o),
  ];
}
