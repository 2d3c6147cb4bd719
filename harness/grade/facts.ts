// Grading in two stages: first the facts (every source of the file parsed once: the lab server's
// lines, the container states the watch and the reads showed, the timeline as the one derivation
// gives it), then the checks, each a pure function of these facts.
import type { ContainerRecord, Observation, StateCitation, WatchEvent } from '../observation/schema.ts';
import {
  carriesPod,
  containerLabLines,
  type DerivedTimeline,
  deriveContainers,
  deriveTimeline,
  type LabLine,
  type LineJson,
  type MalformedLabLine,
  parseLabLogLines,
} from '../observation/timeline.ts';

/** A container state as the watch event or pod read shows it. */
export type ShownState = WatchEvent['containers'][number];

export interface StateSource {
  citation: StateCitation;
  receivedAt: number;
  containers: ShownState[];
  deletionTimestamp: string | null;
  deletionGracePeriodSeconds: number | null;
}

export interface Facts {
  /** The file as read: the harness's own recorded points, the request, the cleanup. */
  readonly o: Observation;
  /** Every log line that is one of the lab server's (or hook's) JSON events, its fields typed. */
  readonly lab: readonly LabLine[];
  /** Log lines that name a lab event with fields of the wrong type: the server never writes them. */
  readonly malformed: readonly MalformedLabLine[];
  /** Every log line's JSON, parsed once (the lab lines above are read from it). */
  readonly lineJson: readonly LineJson[];
  /** Watch events and found pod reads of this pod, in the order the harness received them. */
  readonly states: readonly StateSource[];
  /** The lab container: the first in the live pod's spec (the template has one). */
  readonly container: string | null;
  /** The timeline as the runner's own derivation gives it from this file's evidence. */
  readonly derived: DerivedTimeline;
  /**
   * The timeline as the checks read it: the harness's own points (watch, request, Ready, delete) as it
   * recorded them, every point the evidence gives as `derived` recomputes it, never as the file claims
   * it (evidence.timeline-cited compares the two).
   */
  readonly timeline: Observation['timeline'];
  /** The container log can be taken as whole: the run finished, the stream did not end early, and no API outage cut it. */
  readonly logComplete: boolean;
  /** Every container of the live pod as its own sources show it, the app first (deriveContainers, recomputed). */
  readonly containers: readonly ContainerRecord[];
  /** Each sidecar's own log lines, parsed once (the app's are `lab`). */
  readonly sidecarLines: ReadonlyMap<string, { lines: readonly LabLine[]; malformed: readonly MalformedLabLine[] }>;
  /** The delay the harness really waited between the acceptance and the delete (ms), when both happened. */
  readonly deleteDelayMs: number | null;
}

/** A watch of the run lost events (dropped, or relisted after its history expired): the API was away. Pod and rollout observations alike. */
export function watchHadGap(
  o: { evidence: { watchLifecycle: Observation['evidence']['watchLifecycle'] } },
  beforeMono = Infinity,
): boolean {
  return o.evidence.watchLifecycle.some(
    (w) => (w.event === 'dropped' || w.event === 'expired-relisted') && w.at.mono <= beforeMono,
  );
}

function stateSourcesOf(o: Observation): StateSource[] {
  const uid = o.pod?.uid ?? null;
  const fromWatch = o.evidence.watchEvents.filter(carriesPod).map(
    (e): StateSource => ({
      citation: { kind: 'watch', type: e.type, resourceVersion: e.resourceVersion },
      receivedAt: e.receivedAt.mono,
      containers: e.containers,
      deletionTimestamp: e.deletionTimestamp,
      deletionGracePeriodSeconds: e.deletionGracePeriodSeconds,
    }),
  );
  const fromReads = o.evidence.podReads
    .map((r, index) => ({ r, index }))
    .filter(({ r }) => r.found && r.uid === uid)
    .map(
      ({ r, index }): StateSource => ({
        citation: { kind: 'read', index, resourceVersion: r.resourceVersion },
        receivedAt: r.at.mono,
        containers: r.containers,
        deletionTimestamp: r.deletionTimestamp,
        deletionGracePeriodSeconds: r.deletionGracePeriodSeconds,
      }),
    );
  return [...fromWatch, ...fromReads].sort((a, b) => a.receivedAt - b.receivedAt);
}

/** The facts of one observation, worked out once; grade() builds them afresh for every call. */
export function factsOf(o: Observation): Facts {
  const { lines, malformed, json } = parseLabLogLines(o.evidence.logLines);
  const { requestAccepted, deleteIssued } = o.timeline;
  const derived = deriveTimeline(
    { scenario: o.scenario, pod: o.pod, deleteIssued: deleteIssued?.at ?? null, evidence: o.evidence },
    lines,
  );
  const { finalState: _final, ...points } = derived;
  const parsed = containerLabLines(o, { lines, malformed });
  const app = o.pod?.containers[0]?.name;
  return {
    o,
    lab: lines,
    malformed,
    lineJson: json,
    states: stateSourcesOf(o),
    container: o.pod?.containers[0]?.name ?? null,
    derived,
    timeline: { ...o.timeline, ...points },
    containers: deriveContainers(o, parsed),
    sidecarLines: new Map([...parsed].filter(([name]) => name !== app)),
    logComplete: !o.evidence.logEndedEarly && o.run.complete && !watchHadGap(o),
    deleteDelayMs: requestAccepted && deleteIssued ? deleteIssued.at.mono - requestAccepted.at.mono : null,
  };
}
