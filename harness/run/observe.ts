// Builds the observation from what one scenario run recorded. Every time keeps its source.
import type * as k8s from '@kubernetes/client-node';
import { OBSERVATION_SCHEMA_VERSION, type HarnessTime, type Observation } from '../observation.ts';
import { apiTimeString } from './clock.ts';
import type { Scenario } from '../scenario/schema.ts';
import { labEvents, type LogFollower } from './logs.ts';
import type { RequestRecord } from './request.ts';
import type { PodWatch } from './watch.ts';

export interface Recorded {
  run: Observation['run'];
  scenario: Scenario;
  pod: Observation['pod'];
  podReady: HarnessTime | null;
  watchEstablished: HarnessTime | null;
  deleteIssued: HarnessTime | null;
  deleteAck: { at: HarnessTime; deletionTimestamp: string; deletionGracePeriodSeconds: number } | null;
  request: RequestRecord;
  watch: PodWatch | null;
  logs: LogFollower | null;
  podEvents: Observation['evidence']['podEvents'];
  /** Pods read with GET after a watch gap or at the end, kept apart from watch events. */
  podReads: Observation['evidence']['podReads'];
  cleanup: Observation['cleanup'];
  portForwardErrors: string[];
  /** The port-forward connections' life on the run's clock; empty for the direct transport. */
  transport: Observation['evidence']['transport'];
}

const at = (time: HarnessTime | null) => (time ? { at: time } : null);

type Timeline = Observation['timeline'];
/** The API always fills a terminated state's exit code; a state without one is recorded as this, which no model predicts. */
const UNKNOWN_EXIT_CODE = -1;
type FinalState = NonNullable<Observation['finalState']>;

/** The lab container: the first in the pod's spec (the template has one). */
function labContainerName(r: Recorded): string | null {
  return r.pod?.containers[0]?.name ?? r.watch?.events.find((e) => e.containers.length)?.containers[0]?.name ?? null;
}

/**
 * The final state: from the first watch event that shows the lab container terminated, else from
 * the last pod read of this pod (same UID) that shows it, cited as a read, never as a watch event.
 */
function finalStateOf(r: Recorded, container: string | null): { state: FinalState; seen: NonNullable<Timeline['containerTerminated']> } | null {
  if (!container) return null;
  const watch = r.watch;
  const index = watch ? watch.events.findIndex((e) => e.containers.some((c) => c.name === container && c.state === 'terminated')) : -1;
  if (watch && index >= 0) {
    const event = watch.events[index]!;
    const status = watch.pods[index]?.status?.containerStatuses?.find((c: k8s.V1ContainerStatus) => c.name === container);
    const terminated = status?.state?.terminated;
    const shown = event.containers.find((c) => c.name === container)!;
    const from = { kind: 'watch' as const, type: event.type, resourceVersion: event.resourceVersion };
    return {
      state: {
        exitCode: shown.exitCode ?? terminated?.exitCode ?? UNKNOWN_EXIT_CODE, reason: shown.reason ?? null, signal: terminated?.signal ?? null,
        startedAt: apiTimeString(terminated?.startedAt), finishedAt: apiTimeString(terminated?.finishedAt), message: terminated?.message ?? null,
        container, from,
      },
      seen: { at: event.receivedAt, from },
    };
  }
  const uid = r.pod?.uid;
  for (let i = r.podReads.length - 1; i >= 0; i--) {
    const read = r.podReads[i]!;
    const shown = read.containers.find((c) => c.name === container && c.state === 'terminated');
    if (!read.found || read.uid !== uid || !shown) continue;
    const from = { kind: 'read' as const, index: i, resourceVersion: read.resourceVersion };
    return {
      state: { exitCode: shown.exitCode ?? UNKNOWN_EXIT_CODE, reason: shown.reason ?? null, signal: null, startedAt: null, finishedAt: null, message: null, container, from },
      seen: { at: read.at, from },
    };
  }
  return null;
}

/** The lab server's events with the index of the log line each came from. */
function citedLabEvents(lines: Observation['evidence']['logLines']) {
  const events: { line: number; event: string; time: string; mono: number; [key: string]: unknown }[] = [];
  lines.forEach((line, index) => {
    for (const event of labEvents([line])) events.push({ ...event, line: index });
  });
  return events;
}

export function buildObservation(r: Recorded): Observation {
  const lines = r.logs?.lines ?? [];
  const events = citedLabEvents(lines);
  const logged = (e: { time: string; mono: number; line: number }) => ({ source: 'container-log' as const, at: { time: e.time, mono: e.mono }, from: { kind: 'log' as const, line: e.line } });
  const hookStart = events.find((e) => e.event === 'hook-start');
  const hookEnd = events.find((e) => e.event === 'hook-end');
  const term = events.find((e) => e.event === 'signal');
  const watchEvents = r.watch?.events ?? [];
  const final = finalStateOf(r, labContainerName(r));
  const finalState = final?.state ?? null;
  const deletedEvent = watchEvents.find((e) => e.type === 'DELETED');
  const goneRead = r.podReads.findIndex((p) => !p.found);
  const podDeleted: Timeline['podDeleted'] = deletedEvent
    ? { at: deletedEvent.receivedAt, from: { kind: 'watch', type: 'DELETED', resourceVersion: deletedEvent.resourceVersion } }
    : goneRead >= 0 ? { at: r.podReads[goneRead]!.at, from: { kind: 'read', index: goneRead, resourceVersion: r.podReads[goneRead]!.resourceVersion } } : null;
  const deletionSeen = watchEvents.find((e) => e.deletionTimestamp !== null);

  // The sleep action runs in the kubelet and leaves no trace in the container: infer its span.
  let inferredHook: { start: Timeline['hookStart']; end: Timeline['hookEnd'] } = { start: null, end: null };
  if (r.scenario.preStop.kind === 'sleep-action' && r.deleteIssued) {
    inferredHook = {
      start: deletionSeen
        ? { source: 'inferred', at: deletionSeen.receivedAt, basis: 'the sleep action leaves no trace; taken as the deletion seen by the watch', from: { kind: 'watch', type: deletionSeen.type, resourceVersion: deletionSeen.resourceVersion } }
        : { source: 'inferred', at: r.deleteIssued, basis: 'the sleep action leaves no trace; taken as the delete issued', from: { kind: 'harness', point: 'deleteIssued' } },
      end: term ? { source: 'inferred', at: lines[term.line]!.receivedAt, basis: 'the TERM line arriving: the kubelet signals right after the hook', from: { kind: 'log', line: term.line } } : null,
    };
  }

  let outcome = r.request.outcome;
  let errorCode = r.request.errorCode;
  // A cut with no TERM and no container end near it is the forward breaking, not the server.
  if (outcome === 'cut' && !term && !final && r.portForwardErrors.length) {
    outcome = 'transport-failed';
    errorCode = `PORTFORWARD: ${r.portForwardErrors[0]!.slice(0, 200)}`;
  }

  return {
    schemaVersion: OBSERVATION_SCHEMA_VERSION,
    kind: 'termlab.observation',
    run: r.run,
    scenario: r.scenario,
    pod: r.pod,
    timeline: {
      watchEstablished: at(r.watchEstablished),
      podReady: at(r.podReady),
      requestSent: at(r.request.sent),
      requestAccepted: at(r.request.accepted),
      deleteIssued: at(r.deleteIssued),
      deleteAcknowledged: r.deleteAck,
      hookStart: hookStart ? logged(hookStart) : inferredHook.start,
      hookEnd: hookEnd ? logged(hookEnd) : inferredHook.end,
      termReceived: term ? { ...logged(term), signal: String(term.signal ?? 'unknown') } : null,
      requestEnded: at(r.request.ended),
      containerTerminated: final?.seen ?? null,
      podDeleted,
    },
    request: {
      id: r.request.id, status: r.request.status, bytes: r.request.bytes, sha256: r.request.sha256, done: r.request.done,
      doneSeen: r.request.doneSeen, podUid: r.request.podUid, errorCode, outcome,
    },
    finalState,
    evidence: {
      watchEvents,
      watchLifecycle: r.watch?.lifecycle ?? [],
      podReads: r.podReads,
      transport: r.transport,
      logLines: lines,
      // Early: the stream broke, or ended while the container was never seen to end.
      logEndedEarly: Boolean(r.logs && (r.logs.error !== null || (r.logs.ended && !finalState))),
      podEvents: r.podEvents,
    },
    cleanup: r.cleanup,
  };
}
