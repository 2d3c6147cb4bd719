// The one derivation of an observation's timeline from its evidence: the runner writes its result,
// the grader recomputes it from the same evidence and compares, test fixtures call it. Pure: no
// clock, no cluster, only what the file holds.
import { parseLabLine, parseProxyLine } from '../../server/contract-schemas.ts';
import type { ContainerRecord, HarnessTime, Observation, WatchEvent } from './schema.ts';
import { jsonDepth, MAX_JSON_DEPTH, valueDepth } from './read.ts';

type Timeline = Observation['timeline'];
type FinalState = NonNullable<Observation['finalState']>;

/** What the timeline is derived from: the recorded evidence, the live pod and the harness's delete. */
export interface TimelineEvidence {
  scenario: { preStop: { kind: string } };
  pod: Observation['pod'];
  deleteIssued: HarnessTime | null;
  evidence: Pick<Observation['evidence'], 'watchEvents' | 'podReads' | 'logLines'>;
}

/** The derived part of the timeline, and the final state as far as the evidence names it (the API's times come from the raw pod). */
export interface DerivedTimeline {
  hookStart: Timeline['hookStart'];
  hookEnd: Timeline['hookEnd'];
  termReceived: Timeline['termReceived'];
  containerTerminated: Timeline['containerTerminated'];
  podDeleted: Timeline['podDeleted'];
  finalState: Pick<FinalState, 'exitCode' | 'reason' | 'container' | 'from'> | null;
}

/** The fields of the timeline this derivation owns, in the order a report names them. */
export const DERIVED_TIMELINE_FIELDS = [
  'hookStart',
  'hookEnd',
  'termReceived',
  'containerTerminated',
  'podDeleted',
] as const;

/** The API always fills a terminated state's exit code; a state without one is recorded as this, which no model predicts. */
const UNKNOWN_EXIT_CODE = -1;

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
  fail?: true;
  /** A proxy's lines: `proxy`; how a forwarded request ended, and the app's status. */
  role?: string;
  outcome?: string;
  status?: number | null;
  /** An effect line (the retries lab): the client's key, the point in the work, the ledger's answer and record. */
  key?: string | null;
  point?: string;
  result?: string;
  seq?: number | null;
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

/** A log line's JSON: its value (undefined when it is no JSON object or is too deep), and whether it looks like JSON nested deeper than a lab line can. */
export type LineJson = { value: unknown; tooDeep: boolean };
const NO_JSON: LineJson = { value: undefined, tooDeep: false };

/** A log line's JSON, parsed once: V8's JSON.parse is iterative, and a line deeper than MAX_JSON_DEPTH is no lab line (what reads it after would recurse). */
export function logLineJson(text: string): LineJson {
  if (!text.startsWith('{')) return NO_JSON;
  try {
    const value: unknown = JSON.parse(text);
    return valueDepth(value) > MAX_JSON_DEPTH ? { value: undefined, tooDeep: true } : { value, tooDeep: false };
  } catch {
    return { value: undefined, tooDeep: jsonDepth(text) > MAX_JSON_DEPTH };
  }
}

/** A log line's JSON, or undefined when it is not JSON or is nested deeper than any lab line. */
export function parseLogLineJson(text: string): unknown {
  return logLineJson(text).value;
}

/**
 * The lab server's events in any container log (a rollout has one per pod), each parsed once through its
 * schema; `json` is every line's JSON as parsed for it, for the checks that read a line's other fields.
 */
export function parseLabLogLines(logLines: readonly { text: string }[]): {
  lines: LabLine[];
  malformed: MalformedLabLine[];
  json: LineJson[];
} {
  const lines: LabLine[] = [];
  const malformed: MalformedLabLine[] = [];
  const json = logLines.map((l) => logLineJson(l.text));
  json.forEach(({ value }, line) => {
    // Each line through its schema in the pod contract (server/contract-schemas.ts).
    const parsed = parseLabLine(value);
    if (parsed.kind === 'malformed') malformed.push({ line, event: parsed.event, problem: parsed.problem });
    if (parsed.kind !== 'event' && parsed.kind !== 'other') return;
    const { event, time, mono, ...fields } = parsed.line;
    lines.push({ line, event, time, mono, fields: fields as LabFields });
  });
  return { lines, malformed, json };
}

/**
 * A sidecar proxy's log (server/proxy.ts): its own lines through the proxy's schemas, and the exec hook's
 * lines (lab-hook writes to the container's PID 1, so they land in the proxy's log) through the app's.
 */
function parseSidecarLogLines(logLines: readonly { text: string }[]): {
  lines: LabLine[];
  malformed: MalformedLabLine[];
} {
  const lines: LabLine[] = [];
  const malformed: MalformedLabLine[] = [];
  logLines.forEach((l, line) => {
    const json = parseLogLineJson(l.text);
    const proxy = parseProxyLine(json);
    const hook = proxy.kind === 'event' ? null : parseLabLine(json);
    const parsed =
      proxy.kind === 'event'
        ? proxy
        : hook && hook.kind === 'event' && (hook.event === 'hook-start' || hook.event === 'hook-end')
          ? hook
          : proxy;
    if (parsed.kind === 'malformed') {
      malformed.push({ line, event: parsed.event, problem: parsed.problem });
      return;
    }
    if (parsed.kind !== 'event') return;
    const { event, time, mono, ...fields } = parsed.line as { event: string; time: string; mono: number };
    lines.push({ line, event, time, mono, fields: fields as LabFields });
  });
  return { lines, malformed };
}

/** ERROR and BOOKMARK watch events carry a Status or a bare resourceVersion, never a pod's state. */
export const carriesPod = (e: { type: string }) => e.type !== 'ERROR' && e.type !== 'BOOKMARK';

/** The lab container: the first in the live pod's spec (the template has one), else the first a watch event shows. */
function labContainerOf(e: Pick<TimelineEvidence, 'pod' | 'evidence'>): string | null {
  return (
    e.pod?.containers[0]?.name ??
    e.evidence.watchEvents.find((w) => carriesPod(w) && w.containers.length)?.containers[0]?.name ??
    null
  );
}

/**
 * The container's end: the first watch event that shows it terminated, else the last pod read of
 * this pod (same UID) that shows it, cited as a read, never as a watch event.
 */
function containerEnd(
  e: Pick<TimelineEvidence, 'pod' | 'evidence'>,
  container: string | null,
): { seen: NonNullable<Timeline['containerTerminated']>; final: NonNullable<DerivedTimeline['finalState']> } | null {
  if (!container) return null;
  const { watchEvents, podReads } = e.evidence;
  const event = watchEvents.find(
    (w) => carriesPod(w) && w.containers.some((c) => c.name === container && c.state === 'terminated'),
  );
  if (event) {
    const shown = event.containers.find((c) => c.name === container && c.state === 'terminated')!;
    const from = { kind: 'watch' as const, type: event.type, resourceVersion: event.resourceVersion };
    return {
      seen: { at: event.receivedAt, from },
      final: { exitCode: shown.exitCode ?? UNKNOWN_EXIT_CODE, reason: shown.reason ?? null, container, from },
    };
  }
  const uid = e.pod?.uid;
  for (let i = podReads.length - 1; i >= 0; i--) {
    const read = podReads[i]!;
    const shown = read.containers.find((c) => c.name === container && c.state === 'terminated');
    if (!read.found || read.uid !== uid || !shown) continue;
    const from = { kind: 'read' as const, index: i, resourceVersion: read.resourceVersion };
    return {
      seen: { at: read.at, from },
      final: { exitCode: shown.exitCode ?? UNKNOWN_EXIT_CODE, reason: shown.reason ?? null, container, from },
    };
  }
  return null;
}

function podDeleted(e: TimelineEvidence): Timeline['podDeleted'] {
  const deleted = e.evidence.watchEvents.find((w) => w.type === 'DELETED');
  if (deleted)
    return {
      at: deleted.receivedAt,
      from: { kind: 'watch', type: 'DELETED', resourceVersion: deleted.resourceVersion },
    };
  const gone = e.evidence.podReads.findIndex((r) => !r.found);
  return gone >= 0
    ? {
        at: e.evidence.podReads[gone]!.at,
        from: { kind: 'read', index: gone, resourceVersion: e.evidence.podReads[gone]!.resourceVersion },
      }
    : null;
}

/** The sleep action runs in the kubelet and leaves no trace in the container: its span is inferred. */
function inferredSleepAction(
  e: TimelineEvidence,
  term: LabLine | undefined,
): { start: Timeline['hookStart']; end: Timeline['hookEnd'] } {
  if (e.scenario.preStop.kind !== 'sleep-action' || !e.deleteIssued) return { start: null, end: null };
  const deletionSeen: WatchEvent | undefined = e.evidence.watchEvents.find((w) => w.deletionTimestamp !== null);
  return {
    start: deletionSeen
      ? {
          source: 'inferred',
          at: deletionSeen.receivedAt,
          basis: 'the sleep action leaves no trace; taken as the deletion seen by the watch',
          from: { kind: 'watch', type: deletionSeen.type, resourceVersion: deletionSeen.resourceVersion },
        }
      : {
          source: 'inferred',
          at: e.deleteIssued,
          basis: 'the sleep action leaves no trace; taken as the delete issued',
          from: { kind: 'harness', point: 'deleteIssued' },
        },
    end: term
      ? {
          source: 'inferred',
          at: e.evidence.logLines[term.line]!.receivedAt,
          basis: 'the TERM line arriving: the kubelet signals right after the hook',
          from: { kind: 'log', line: term.line },
        }
      : null,
  };
}

export function deriveTimeline(
  e: TimelineEvidence,
  lab = parseLabLogLines(e.evidence.logLines).lines,
): DerivedTimeline {
  const first = (event: string) => lab.find((l) => l.event === event);
  const logged = (l: LabLine) => ({
    source: 'container-log' as const,
    at: { time: l.time, mono: l.mono },
    from: { kind: 'log' as const, line: l.line },
  });
  const hookStart = first('hook-start'),
    hookEnd = first('hook-end'),
    term = first('signal');
  const inferred = inferredSleepAction(e, term);
  const end = containerEnd(e, labContainerOf(e));
  return {
    hookStart: hookStart ? logged(hookStart) : inferred.start,
    hookEnd: hookEnd ? logged(hookEnd) : inferred.end,
    termReceived: term ? { ...logged(term), signal: String(term.fields.signal ?? 'unknown') } : null,
    containerTerminated: end?.seen ?? null,
    podDeleted: podDeleted(e),
    finalState: end?.final ?? null,
  };
}

/** The evidence the container records are derived from: the timeline's, and the sidecars' own logs. */
export interface ContainersEvidence {
  pod: Observation['pod'];
  evidence: Pick<Observation['evidence'], 'watchEvents' | 'podReads' | 'logLines' | 'containerLogs'>;
}

/** Each container's own log lines, parsed once: the app's (evidence.logLines, or as the caller parsed them) and every sidecar's. */
export function containerLabLines(
  e: ContainersEvidence,
  appLines?: { lines: LabLine[]; malformed: MalformedLabLine[] },
): Map<string, { lines: LabLine[]; malformed: MalformedLabLine[] }> {
  const app = labContainerOf(e);
  const byName = new Map<string, { lines: LabLine[]; malformed: MalformedLabLine[] }>();
  for (const c of e.pod?.containers ?? []) {
    if (c.name === app) byName.set(c.name, appLines ?? parseLabLogLines(e.evidence.logLines));
    else
      byName.set(
        c.name,
        parseSidecarLogLines(e.evidence.containerLogs?.find((l) => l.container === c.name)?.lines ?? []),
      );
  }
  return byName;
}

/**
 * Every container of the live pod, the app first, from its own sources: hook, TERM and exit from its
 * own log (first of each), its end from the watch (else a read). A pod of one container has one record.
 */
export function deriveContainers(e: ContainersEvidence, parsed = containerLabLines(e)): ContainerRecord[] {
  const app = labContainerOf(e);
  return (e.pod?.containers ?? []).map((c) => {
    const lines = parsed.get(c.name)?.lines ?? [];
    const first = (event: string) =>
      lines.find(
        (l) => l.event === event && (c.name === app || event.startsWith('hook-') || l.fields.role !== undefined),
      );
    const point = (l: LabLine | undefined) => (l ? { at: { time: l.time, mono: l.mono }, line: l.line } : null);
    const term = first('signal'),
      exit = first('exit');
    const end = containerEnd(e, c.name);
    return {
      name: c.name,
      role: c.name === app ? ('app' as const) : ('sidecar' as const),
      native: c.init === true && c.restartPolicy === 'Always',
      hookStart: point(first('hook-start')),
      hookEnd: point(first('hook-end')),
      termReceived: term ? { ...point(term)!, signal: String(term.fields.signal ?? 'unknown') } : null,
      exitLogged: exit && typeof exit.fields.code === 'number' ? { ...point(exit)!, code: exit.fields.code } : null,
      terminated: end?.seen ?? null,
      finalState: end ? { exitCode: end.final.exitCode, reason: end.final.reason, from: end.final.from } : null,
    };
  });
}
