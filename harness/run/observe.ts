// Builds the observation from what one scenario run recorded. Every time keeps its source.
import type * as k8s from '@kubernetes/client-node';
import type { HarnessTime, Observation } from '../observation.ts';
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
}

const at = (time: HarnessTime | null) => (time ? { at: time } : null);

function finalStateOf(watch: PodWatch | null): Observation['finalState'] {
  if (!watch) return null;
  const index = watch.pods.findIndex((p) => p.status?.containerStatuses?.some((c) => c.state?.terminated));
  if (index < 0) return null;
  const pod: k8s.V1Pod = watch.pods[index]!;
  const event = watch.events[index]!;
  const terminated = pod.status!.containerStatuses!.find((c) => c.state?.terminated)!.state!.terminated!;
  return {
    exitCode: terminated.exitCode, reason: terminated.reason ?? null, signal: terminated.signal ?? null,
    startedAt: apiTimeString(terminated.startedAt), finishedAt: apiTimeString(terminated.finishedAt), message: terminated.message ?? null,
    fromEvent: { type: event.type, resourceVersion: event.resourceVersion },
  };
}

export function buildObservation(r: Recorded): Observation {
  const lines = r.logs?.lines ?? [];
  const events = labEvents(lines);
  const lineOf = (e: { time: string; mono: number }) => lines.find((l) => l.text.includes(`"time":"${e.time}"`) && l.text.includes(`"mono":${e.mono}`));
  const hookStart = events.find((e) => e.event === 'hook-start');
  const hookEnd = events.find((e) => e.event === 'hook-end');
  const term = events.find((e) => e.event === 'signal');
  const watchEvents = r.watch?.events ?? [];
  const finalState = finalStateOf(r.watch);
  const terminatedIndex = watchEvents.findIndex((e) => e.containers.some((c) => c.state === 'terminated'));
  const deletedEvent = watchEvents.find((e) => e.type === 'DELETED');
  const deletionSeen = watchEvents.find((e) => e.deletionTimestamp !== null);

  // The sleep action runs in the kubelet and leaves no trace in the container: infer its span.
  let inferredHook: { start: Observation['timeline']['hookStart']; end: Observation['timeline']['hookEnd'] } = { start: null, end: null };
  if (r.scenario.preStop.kind === 'sleep-action' && r.deleteIssued) {
    const termLine = term ? lineOf(term) : undefined;
    inferredHook = {
      start: { source: 'inferred', at: deletionSeen?.receivedAt ?? r.deleteIssued, basis: 'the sleep action leaves no trace; taken as the deletion seen by the watch' },
      end: termLine ? { source: 'inferred', at: termLine.receivedAt, basis: 'the TERM line arriving: the kubelet signals right after the hook' } : null,
    };
  }

  let outcome = r.request.outcome;
  let errorCode = r.request.errorCode;
  // A cut with no TERM and no container end near it is the forward breaking, not the server.
  if (outcome === 'cut' && !term && terminatedIndex < 0 && r.portForwardErrors.length) {
    outcome = 'transport-failed';
    errorCode = `PORTFORWARD: ${r.portForwardErrors[0]!.slice(0, 200)}`;
  }

  return {
    schemaVersion: 1,
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
      hookStart: hookStart ? { source: 'container-log', at: { time: hookStart.time, mono: hookStart.mono } } : inferredHook.start,
      hookEnd: hookEnd ? { source: 'container-log', at: { time: hookEnd.time, mono: hookEnd.mono } } : inferredHook.end,
      termReceived: term ? { source: 'container-log', at: { time: term.time, mono: term.mono }, signal: String(term.signal ?? 'unknown') } : null,
      requestEnded: at(r.request.ended),
      containerTerminated: terminatedIndex >= 0 ? { at: watchEvents[terminatedIndex]!.receivedAt, resourceVersion: watchEvents[terminatedIndex]!.resourceVersion } : null,
      podDeleted: deletedEvent ? { at: deletedEvent.receivedAt, resourceVersion: deletedEvent.resourceVersion } : null,
    },
    request: { id: r.request.id, status: r.request.status, bytes: r.request.bytes, doneSeen: r.request.doneSeen, errorCode, outcome },
    finalState,
    evidence: {
      watchEvents,
      watchLifecycle: r.watch?.lifecycle ?? [],
      podReads: r.podReads,
      logLines: lines,
      // Early: the stream broke, or ended while the container was never seen to end.
      logEndedEarly: Boolean(r.logs && (r.logs.error !== null || (r.logs.ended && !finalState))),
      podEvents: r.podEvents,
    },
    cleanup: r.cleanup,
  };
}
