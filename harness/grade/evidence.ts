// Evidence checks: is this file a faithful record of one pod's termination? A file that fails
// any of them is "evidence invalid", whatever its outcome says (hand-edited files land here).
import type { Observation } from '../observation.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';

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
  for (const line of o.evidence.logLines) {
    const logged = podUidOfLogLine(line.text);
    if (logged && logged !== uid) return fail(id, `a container log line names pod ${logged}, not ${uid}`);
  }
  return pass(id, `every event and log line belongs to pod ${uid}`);
}

function podUidOfLogLine(text: string): string | null {
  if (!text.startsWith('{')) return null;
  try {
    const value = (JSON.parse(text) as { podUid?: unknown }).podUid;
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

function liveLifecycle(o: Observation): Check {
  const id = 'evidence.live-lifecycle';
  if (!o.pod) return fail(id, 'the live pod was not read before the delete');
  const deleted = o.timeline.deleteIssued;
  if (deleted && o.pod.capturedAt.mono > deleted.at.mono) return fail(id, 'the pod was read after the delete was issued, not before');
  if (o.pod.terminationGracePeriodSeconds !== o.scenario.terminationGracePeriodSeconds) {
    return fail(id, `the live pod's grace is ${o.pod.terminationGracePeriodSeconds}s but the scenario asked for ${o.scenario.terminationGracePeriodSeconds}s`);
  }
  const hasPreStop = o.pod.containers.some((c) => c.lifecycle && 'preStop' in c.lifecycle);
  if (hasPreStop !== (o.scenario.preStop.kind !== 'none')) {
    return fail(id, hasPreStop ? 'the live pod has a preStop hook the scenario does not' : 'the scenario has a preStop hook the live pod lacks');
  }
  return pass(id, 'grace and lifecycle were read from the live pod before the delete and match the scenario');
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

function terminationObserved(o: Observation): Check {
  const id = 'evidence.terminated-observed';
  const final = o.finalState;
  if (!final) return fail(id, 'no terminated container state was observed');
  const source = o.evidence.watchEvents.find((e) => e.resourceVersion === final.fromEvent.resourceVersion && e.type === final.fromEvent.type);
  if (!source) return fail(id, `the final state cites watch event ${final.fromEvent.type}@${final.fromEvent.resourceVersion}, which is not in the evidence`);
  const terminated = source.containers.find((c) => c.state === 'terminated');
  if (!terminated || terminated.exitCode !== final.exitCode) {
    return fail(id, `watch event ${final.fromEvent.resourceVersion} does not show a container terminated with exit code ${final.exitCode}`);
  }
  return pass(id, `the container was seen terminated (exit ${final.exitCode}) in watch event ${source.type}@${source.resourceVersion}`);
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
  let previous: [string, number] | null = null;
  for (const [name, mono] of ordered) {
    if (mono === undefined) continue;
    if (previous && mono < previous[1]) return fail(id, `the harness clock runs backwards: ${name} is before ${previous[0]}`);
    previous = [name, mono];
  }
  for (const [what, times] of [
    ['watch events', o.evidence.watchEvents.map((e) => e.receivedAt.mono)],
    ['log lines', o.evidence.logLines.map((l) => l.receivedAt.mono)],
  ] as const) {
    const back = times.findIndex((m, i) => i > 0 && m < times[i - 1]!);
    if (back > 0) return fail(id, `the harness clock runs backwards in the ${what} (entry ${back})`);
  }
  return pass(id, 'the harness clock only moves forward');
}

export function evidenceChecks(o: Observation): Check[] {
  return [watchBeforeRequest(o), singlePodUid(o), liveLifecycle(o), acceptedBeforeDelete(o), terminationObserved(o), clockMonotonic(o)];
}
