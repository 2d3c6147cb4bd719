// Builds the observation from what one scenario run recorded. Every time keeps its source.
import type * as k8s from '@kubernetes/client-node';
import { OBSERVATION_SCHEMA_VERSION, type HarnessTime, type Observation } from '../observation/schema.ts';
import { apiTimeString } from './clock.ts';
import type { Scenario } from '../scenario/schema.ts';
import type { LogFollower } from './logs.ts';
import { type DerivedTimeline, deriveContainers, deriveTimeline } from '../observation/timeline.ts';
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
  /** The sidecars' logs (containers other than the lab's), each followed apart. */
  sidecarLogs?: { container: string; logs: LogFollower }[];
  podEvents: Observation['evidence']['podEvents'];
  /** Pods read with GET after a watch gap or at the end, kept apart from watch events. */
  podReads: Observation['evidence']['podReads'];
  cleanup: Observation['cleanup'];
  portForwardErrors: string[];
  /** The port-forward connections' life on the run's clock; empty for the direct transport. */
  transport: Observation['evidence']['transport'];
}

const at = (time: HarnessTime | null) => (time ? { at: time } : null);

/** The API's times of the container's end: only the raw pod of the watch event the derivation cites has them. */
function apiTimesOf(
  r: Recorded,
  final: NonNullable<DerivedTimeline['finalState']>,
): Pick<NonNullable<Observation['finalState']>, 'signal' | 'startedAt' | 'finishedAt' | 'message'> {
  const from = final.from;
  const index =
    from.kind === 'watch' && r.watch
      ? r.watch.events.findIndex((e) => e.type === from.type && e.resourceVersion === from.resourceVersion)
      : -1;
  const terminated =
    index >= 0
      ? r.watch!.pods[index]?.status?.containerStatuses?.find((c: k8s.V1ContainerStatus) => c.name === final.container)
          ?.state?.terminated
      : undefined;
  return {
    signal: terminated?.signal ?? null,
    startedAt: apiTimeString(terminated?.startedAt),
    finishedAt: apiTimeString(terminated?.finishedAt),
    message: terminated?.message ?? null,
  };
}

export function buildObservation(r: Recorded): Observation {
  const lines = r.logs?.lines ?? [];
  const watchEvents = r.watch?.events ?? [];
  const evidence = { watchEvents, podReads: r.podReads, logLines: lines };
  const derived = deriveTimeline({ scenario: r.scenario, pod: r.pod, deleteIssued: r.deleteIssued, evidence });
  const end = derived.finalState;
  const finalState = end
    ? { exitCode: end.exitCode, reason: end.reason, ...apiTimesOf(r, end), container: end.container, from: end.from }
    : null;
  // The sidecars' logs, each with whether its stream broke or ended before its container was seen to.
  const containerLogs = (r.sidecarLogs ?? []).map(({ container, logs }) => ({
    container,
    lines: logs.lines,
    endedEarly: logs.error !== null || (logs.ended && !derivedEnds(r, container)),
    streamEnded: logs.streamEndedAt,
  }));
  const containers = deriveContainers({ pod: r.pod, evidence: { ...evidence, containerLogs } });

  let outcome = r.request.outcome;
  let errorCode = r.request.errorCode;
  // A cut with no TERM and no container end near it is the forward breaking, not the server.
  if (outcome === 'cut' && !derived.termReceived && !end && r.portForwardErrors.length) {
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
      // The derivation's own (hook, TERM, container end, pod deletion): the grader recomputes them and compares.
      hookStart: derived.hookStart,
      hookEnd: derived.hookEnd,
      termReceived: derived.termReceived,
      requestEnded: at(r.request.ended),
      containerTerminated: derived.containerTerminated,
      podDeleted: derived.podDeleted,
    },
    request: {
      id: r.request.id,
      status: r.request.status,
      bytes: r.request.bytes,
      sha256: r.request.sha256,
      done: r.request.done,
      doneSeen: r.request.doneSeen,
      podUid: r.request.podUid,
      errorCode,
      outcome,
    },
    containers,
    finalState,
    evidence: {
      watchEvents,
      watchLifecycle: r.watch?.lifecycle ?? [],
      podReads: r.podReads,
      transport: r.transport,
      logLines: lines,
      // Early: the stream broke, or ended while the container was never seen to end.
      logEndedEarly: Boolean(r.logs && (r.logs.error !== null || (r.logs.ended && !finalState))),
      logStreamEnded: r.logs?.streamEndedAt ?? null,
      containerLogs,
      podEvents: r.podEvents,
    },
    cleanup: r.cleanup,
  };
}

/** The watch (or a read) showed this container terminated. */
function derivedEnds(r: Recorded, container: string): boolean {
  return [...(r.watch?.events ?? []), ...r.podReads].some((e) =>
    e.containers.some((c) => c.name === container && c.state === 'terminated'),
  );
}
