// The evidence an observation holds, looked up the same way by every check: the lab server's own
// log lines (with the index each came from), the watch events, and the pod reads of this pod.
import { z } from 'zod';
import type { Observation, PodRead, StateCitation, WatchEvent } from '../observation.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../observation-read.ts';

/**
 * The lab server's (and hook's) log-line events, each kind with its fields typed (server/events.ts,
 * server/app.ts, server/hook.ts). A line parsed here is parsed once; every check reads the result.
 */
const common = {
  time: z.string(),
  mono: z.number(),
  pid: z.number().optional(),
  podUid: z.string().nullable().optional(),
  podName: z.string().optional(),
};
const LAB_EVENTS = {
  listening: z.object({ ...common, mode: z.string().optional(), host: z.string().optional(), port: z.number().optional() }),
  accepted: z.object({ ...common, id: z.string(), ms: z.number() }),
  completed: z.object({ ...common, id: z.string(), ms: z.number(), bytes: z.number() }),
  aborted: z.object({ ...common, id: z.string(), elapsedMs: z.number().optional() }),
  rejected: z.object({ ...common, id: z.string(), reason: z.string().optional() }),
  signal: z.object({ ...common, signal: z.string(), repeated: z.boolean().optional() }),
  draining: z.object({ ...common, active: z.number().optional() }),
  drained: z.object({ ...common, completed: z.number().optional(), rejected: z.number().optional() }),
  'hook-start': z.object({ ...common, kind: z.string(), ms: z.number() }),
  'hook-end': z.object({ ...common, kind: z.string(), ms: z.number() }),
  exit: z.object({ ...common, code: z.number() }),
} as const;
type LabEventName = keyof typeof LAB_EVENTS;
/** An event name the server does not write: still a line with its clock and identity. */
const OTHER_EVENT = z.object(common);

/** Every field a lab event may carry, typed; which are present depends on the event. */
export interface LabFields {
  pid?: number;
  podUid?: string | null;
  podName?: string;
  mode?: string;
  id?: string;
  ms?: number;
  bytes?: number;
  signal?: string;
  kind?: string;
  code?: number;
}

export interface LabLine {
  /** Index in evidence.logLines. */
  line: number;
  event: string;
  time: string;
  mono: number;
  fields: LabFields;
}

/** A log line that names a lab event but whose fields do not have the types the server writes. */
export interface MalformedLabLine {
  line: number;
  event: string;
  problem: string;
}

/** A log line's JSON, or undefined when it is not JSON or is nested deeper than any lab line (parsing it would only exhaust the stack). */
export function parseLogLineJson(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  if (jsonDepth(text) > MAX_JSON_DEPTH) return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}

// Checks ask for the same parsed lines and sources many times: each is worked out once per grading
// of an observation (grade() forgets them first, so an object edited between gradings is seen anew).
const labLinesOf = new WeakMap<Observation, { lines: LabLine[]; malformed: MalformedLabLine[] }>();
const stateSourcesOf = new WeakMap<Observation, StateSource[]>();

export function forgetSources(o: Observation): void {
  labLinesOf.delete(o);
  stateSourcesOf.delete(o);
}

function parseLabLines(o: Observation): { lines: LabLine[]; malformed: MalformedLabLine[] } {
  const cached = labLinesOf.get(o);
  if (cached) return cached;
  const both = parseLabLogLines(o.evidence.logLines);
  labLinesOf.set(o, both);
  return both;
}

/** The lab server's events in any container log (a rollout has one per pod), each parsed once through its schema. */
export function parseLabLogLines(logLines: readonly { text: string }[]): { lines: LabLine[]; malformed: MalformedLabLine[] } {
  const lines: LabLine[] = [];
  const malformed: MalformedLabLine[] = [];
  logLines.forEach((l, line) => {
    const parsed = parseLogLineJson(l.text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return;
    const event = (parsed as { event?: unknown }).event;
    if (typeof event !== 'string') return;
    const schema = Object.hasOwn(LAB_EVENTS, event) ? LAB_EVENTS[event as LabEventName] : OTHER_EVENT;
    const result = schema.safeParse(parsed);
    if (!result.success) {
      // A line without the clock fields is not one of the server's events (the server stamps every one).
      if (result.error.issues.some((i) => i.path[0] === 'time' || i.path[0] === 'mono') && !Object.hasOwn(LAB_EVENTS, event)) return;
      const issue = result.error.issues[0]!;
      malformed.push({ line, event, problem: `field ${issue.path.map(String).join('.') || '(line)'}: ${issue.message}` });
      return;
    }
    const { time, mono, ...fields } = result.data as LabFields & { time: string; mono: number };
    lines.push({ line, event, time, mono, fields });
  });
  return { lines, malformed };
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

/** ERROR and BOOKMARK watch events carry a Status or a bare resourceVersion, never a pod's state. */
export const carriesPod = (e: { type: string }) => e.type !== 'ERROR' && e.type !== 'BOOKMARK';

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
