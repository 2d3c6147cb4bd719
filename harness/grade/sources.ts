// The evidence an observation holds, looked up the same way by every check: the lab server's own
// log lines (with the index each came from), the watch events, and the pod reads of this pod.
import type { Observation, PodRead, StateCitation, WatchEvent } from '../observation.ts';
import { carriesPod, type DerivedTimeline, deriveTimeline, type LabLine, type MalformedLabLine, parseLabLogLines } from '../observation-timeline.ts';

export { carriesPod };

export { type LabFields, type LabLine, type MalformedLabLine, parseLabLogLines, parseLogLineJson } from '../observation-timeline.ts';

// Checks ask for the same parsed lines and sources many times: each is worked out once per grading
// of an observation (grade() forgets them first, so an object edited between gradings is seen anew).
const labLinesOf = new WeakMap<Observation, { lines: LabLine[]; malformed: MalformedLabLine[] }>();
const stateSourcesOf = new WeakMap<Observation, StateSource[]>();
const derivedOf = new WeakMap<Observation, DerivedTimeline>();

export function forgetSources(o: Observation): void {
  labLinesOf.delete(o);
  stateSourcesOf.delete(o);
  derivedOf.delete(o);
}

/** The timeline as the one derivation gives it from this file's evidence. */
export function derivedTimeline(o: Observation): DerivedTimeline {
  const cached = derivedOf.get(o);
  if (cached) return cached;
  const derived = deriveTimeline({ scenario: o.scenario, pod: o.pod, deleteIssued: o.timeline.deleteIssued?.at ?? null, evidence: o.evidence }, labLines(o));
  derivedOf.set(o, derived);
  return derived;
}

function parseLabLines(o: Observation): { lines: LabLine[]; malformed: MalformedLabLine[] } {
  const cached = labLinesOf.get(o);
  if (cached) return cached;
  const both = parseLabLogLines(o.evidence.logLines);
  labLinesOf.set(o, both);
  return both;
}

/** Every log line that is one of the lab server's (or hook's) JSON events, its fields typed. */
export function labLines(o: Observation): LabLine[] {
  return parseLabLines(o).lines;
}

/** Log lines that name a lab event with fields of the wrong type: the server never writes them. */
export function malformedLabLines(o: Observation): MalformedLabLine[] {
  return parseLabLines(o).malformed;
}

/** A watch of the run lost events (dropped, or relisted after its history expired): the API was away. Pod and rollout observations alike. */
export function watchHadGap(o: { evidence: { watchLifecycle: Observation['evidence']['watchLifecycle'] } }, beforeMono = Infinity): boolean {
  return o.evidence.watchLifecycle.some((w) => (w.event === 'dropped' || w.event === 'expired-relisted') && w.at.mono <= beforeMono);
}

/** The container log can be taken as whole: the run finished, the stream did not end early, and no API outage cut it. */
export function logComplete(o: Observation): boolean {
  return !o.evidence.logEndedEarly && o.run.complete && !watchHadGap(o);
}

export const describeLine = (l: { line: number; event?: string }) => `log line ${l.line}${l.event ? ` (${l.event})` : ''}`;
export const describeEvent = (e: { type: string; resourceVersion: string }) => `watch event ${e.type}@${e.resourceVersion}`;
export const describeCitation = (c: StateCitation) => c.kind === 'watch' ? describeEvent(c) : `pod read ${c.index} (resourceVersion ${c.resourceVersion ?? 'none'})`;

/** The lab container: the first in the live pod's spec (the template has one). */
export function labContainer(o: Observation): string | null {
  return o.pod?.containers[0]?.name ?? null;
}

/** A container state as the watch event or pod read shows it. */
export type ShownState = WatchEvent['containers'][number];

export interface StateSource {
  citation: StateCitation;
  receivedAt: number;
  containers: ShownState[];
  deletionTimestamp: string | null;
  deletionGracePeriodSeconds: number | null;
}

/** Watch events and found pod reads of this pod, in the order the harness received them. */
export function stateSources(o: Observation): StateSource[] {
  const cached = stateSourcesOf.get(o);
  if (cached) return cached;
  const uid = o.pod?.uid ?? null;
  const fromWatch = o.evidence.watchEvents
    .filter(carriesPod)
    .map((e): StateSource => ({ citation: { kind: 'watch', type: e.type, resourceVersion: e.resourceVersion }, receivedAt: e.receivedAt.mono, containers: e.containers, deletionTimestamp: e.deletionTimestamp, deletionGracePeriodSeconds: e.deletionGracePeriodSeconds }));
  const fromReads = o.evidence.podReads
    .map((r, index) => ({ r, index }))
    .filter(({ r }) => r.found && r.uid === uid)
    .map(({ r, index }): StateSource => ({ citation: { kind: 'read', index, resourceVersion: r.resourceVersion }, receivedAt: r.at.mono, containers: r.containers, deletionTimestamp: r.deletionTimestamp, deletionGracePeriodSeconds: r.deletionGracePeriodSeconds }));
  const sources = [...fromWatch, ...fromReads].sort((a, b) => a.receivedAt - b.receivedAt);
  stateSourcesOf.set(o, sources);
  return sources;
}


/** What a citation points at, or a sentence saying why it points at nothing acceptable. */
export function resolveState(o: Observation, c: StateCitation): { at: number; containers: ShownState[]; event?: WatchEvent; read?: PodRead } | string {
  if (c.kind === 'watch') {
    if (!carriesPod(c)) return `${describeEvent(c)}, which is a Status, not a pod: it shows no container state`;
    const matches = o.evidence.watchEvents.filter((e) => e.type === c.type && e.resourceVersion === c.resourceVersion);
    if (!matches.length) return `${describeEvent(c)} is not in the evidence`;
    const event = matches[0]!;
    return { at: event.receivedAt.mono, containers: event.containers, event };
  }
  const read = o.evidence.podReads[c.index];
  if (!read) return `pod read ${c.index} is not in the evidence`;
  if (read.resourceVersion !== c.resourceVersion) return `pod read ${c.index} has resourceVersion ${read.resourceVersion}, not ${c.resourceVersion}`;
  if (!read.found) return `pod read ${c.index} found no pod`;
  if (read.uid !== o.pod?.uid) return `pod read ${c.index} is of pod ${read.uid}, not the live pod ${o.pod?.uid ?? '(unknown)'}`;
  return { at: read.at.mono, containers: read.containers, read };
}

/** Seconds on the harness clock from the delete being issued. */
export function sinceDelete(o: Observation, mono: number): number | null {
  const issued = o.timeline.deleteIssued;
  return issued ? (mono - issued.at.mono) / 1000 : null;
}
