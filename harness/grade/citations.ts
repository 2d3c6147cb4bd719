// Every derived time cites where it came from; the grader recomputes each from the evidence with
// the runner's own derivation and compares: a difference names the field.
import { DERIVED_TIMELINE_FIELDS, type DerivedTimeline } from '../observation/timeline.ts';
import { oneLine } from '../../lib/terminal.ts';
import { describeCitation, watchHadGap } from './sources.ts';
import { KUBELET_EXTRA_DELAY_SECONDS, TOLERANCE_SECONDS } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

/** The whole seconds of API times: each end of a difference may be off by up to this. */
const API_PRECISION_SECONDS = 1;
/** How late the kubelet may report an end it saw (its 1 s relist plus the delay newer kubelets add). */
const STATUS_DELAY_SECONDS = KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;

type Point = DerivedTimeline[(typeof DERIVED_TIMELINE_FIELDS)[number]];

const FIELD_NAMES: Record<(typeof DERIVED_TIMELINE_FIELDS)[number], string> = {
  hookStart: 'hook start',
  hookEnd: 'hook end',
  termReceived: 'TERM',
  containerTerminated: 'container end',
  podDeleted: 'pod deletion',
};

/** A point's claim, prose (an inference's basis) left out: its source, time and citation. */
const claimObject = (point: NonNullable<Point>) => ({
  source: 'source' in point ? point.source : 'seen',
  at: point.at,
  from: point.from,
  signal: 'signal' in point ? point.signal : null,
});
const sameClaim = (a: NonNullable<Point>, b: NonNullable<Point>): boolean => jsonEqual(claimObject(a), claimObject(b));

/** A point's claim as path → value, for naming the field two claims differ in. */
function claimFields(point: NonNullable<Point>): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (value: unknown, path: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    else out.set(path, JSON.stringify(value) ?? 'undefined');
  };
  walk(claimObject(point), '');
  return out;
}

function differingFields(prefix: string, recorded: Map<string, string>, expected: Map<string, string>): string {
  const paths = [...new Set([...recorded.keys(), ...expected.keys()])].filter(
    (k) => recorded.get(k) !== expected.get(k),
  );
  return paths
    .map(
      (k) =>
        `${prefix}.${k} is ${oneLine(recorded.get(k) ?? 'absent')}, but the evidence gives ${oneLine(expected.get(k) ?? 'absent')}`,
    )
    .join('; ');
}

/** Equal as JSON would write them, key order aside (undefined and non-finite numbers are null). */
function jsonEqual(a: unknown, b: unknown): boolean {
  const x = asJson(a),
    y = asJson(b);
  if (x === y) return true;
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  if (Array.isArray(x))
    return x.length === (y as unknown[]).length && x.every((v, i) => jsonEqual(v, (y as unknown[])[i]));
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  return keys.every(
    (k) => Object.hasOwn(y, k) && jsonEqual((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]),
  );
}
const asJson = (v: unknown) => (v === undefined || (typeof v === 'number' && !Number.isFinite(v)) ? null : v);

function describePoint(point: NonNullable<Point>): string {
  const from = point.from;
  const cited =
    from.kind === 'log'
      ? `log line ${from.line}`
      : from.kind === 'harness'
        ? 'the delete issued'
        : describeCitation(from);
  const time = 'time' in point.at ? point.at.time : `${point.at.mono} ms`;
  return `${'source' in point && point.source === 'inferred' ? 'inferred from ' : ''}${cited} at ${oneLine(time)}${'signal' in point ? ` (${oneLine(point.signal)})` : ''}`;
}

/**
 * The timeline's derived points are recomputed from the evidence by the one derivation the runner
 * used (observation/timeline.ts): any difference is a time or citation the evidence does not give.
 */
function timelineDerived({ o, derived }: Facts): Check {
  const id = 'evidence.timeline-cited';
  for (const field of DERIVED_TIMELINE_FIELDS) {
    const recorded = o.timeline[field],
      expected = derived[field];
    const name = FIELD_NAMES[field];
    if (recorded === null && expected === null) continue;
    if (recorded === null)
      return fail(
        id,
        `the timeline has no ${name} (timeline.${field}), but the evidence gives ${describePoint(expected!)}`,
      );
    if (expected === null)
      return fail(
        id,
        `the timeline's ${name} (timeline.${field}: ${describePoint(recorded)}) has no ${'source' in recorded && recorded.source === 'container-log' ? 'log line' : 'evidence'} behind it`,
      );
    if (!sameClaim(recorded, expected)) {
      const shown = describePoint(recorded),
        given = describePoint(expected);
      // Two points that read alike differ in a field the prose leaves out (the harness clock's ms): name it.
      if (shown === given)
        return fail(id, differingFields(`timeline.${field}`, claimFields(recorded), claimFields(expected)));
      return fail(id, `the timeline's ${name} (timeline.${field}) is ${shown}, but the evidence gives ${given}`);
    }
  }
  return pass(
    id,
    'every time on the timeline is the one the evidence gives (recomputed from its log lines, watch events and pod reads)',
  );
}

/** The API's own times and the harness clock measure the same span: they must agree. */
function apiTimes(f: Facts): Check {
  const id = 'evidence.api-times';
  const ack = f.timeline.deleteAcknowledged,
    final = f.o.finalState;
  if (final?.startedAt && final.finishedAt && wallMs(final.finishedAt) < wallMs(final.startedAt))
    return fail(id, `the container finished (${final.finishedAt}) before it started (${final.startedAt})`);
  if (!ack || !final?.finishedAt || !f.timeline.deleteIssued || !f.timeline.containerTerminated)
    return pass(id, 'no API end time to compare with the harness clock');
  const api = apiSecondsToEnd(f)!;
  const seen = (f.timeline.containerTerminated.at.mono - f.timeline.deleteIssued.at.mono) / 1000;
  // The API stamped its deletion somewhere between the harness's delete and its answer: a busy API
  // server stamps late, so the span on the harness clock is bounded from the answer below.
  const seenFromAnswer =
    (f.timeline.containerTerminated.at.mono - Math.max(ack.at.mono, f.timeline.deleteIssued.at.mono)) / 1000;
  const both = `finishedAt puts the end ${api.toFixed(1)}s after the delete (API times), but the watch saw it end ${seen.toFixed(1)}s after it (harness clock${seenFromAnswer < seen - API_PRECISION_SECONDS ? `; ${seenFromAnswer.toFixed(1)}s after the delete's answer` : ''})`;
  // The container cannot have ended after the watch saw it end: that is a time the evidence refutes.
  if (api > seen + API_PRECISION_SECONDS) return fail(id, both);
  // Long before the kubelet said so is no proof of an edit: a busy kubelet writes statuses seconds late
  // (10 students at once on the real node: the end seen 6.7 s after finishedAt, every log line on time).
  // After a watch gap the harness saw the end only once the API was back: then it bounds from above alone.
  const seenLate = watchHadGap(f.o, f.timeline.containerTerminated.at.mono);
  if (!seenLate && api < seenFromAnswer - API_PRECISION_SECONDS - STATUS_DELAY_SECONDS) {
    return inconclusive(
      id,
      `${both}: the kubelet reported the end late (a busy node writes statuses seconds late) or finishedAt was edited; the end cannot be placed from the API's times`,
    );
  }
  const deletedAt = wallMs(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000;
  // The container ran before the request was accepted: startedAt is before the delete by at least that delay.
  const acceptedAt =
    deletedAt - (f.timeline.requestAccepted ? f.timeline.deleteIssued.at.mono - f.timeline.requestAccepted.at.mono : 0);
  if (final.startedAt && wallMs(final.startedAt) > acceptedAt + API_PRECISION_SECONDS * 1000)
    return fail(
      id,
      `startedAt (${final.startedAt}) is after the request was accepted (${isoTime(acceptedAt)}, from the deletionTimestamp and the harness clock)`,
    );
  return pass(
    id,
    `the API's times (end ${api.toFixed(1)}s after the delete) agree with the harness clock (${seen.toFixed(1)}s)`,
  );
}

/** A time for a message; a file's extreme times give an out-of-range Date, which must not throw. */
const isoTime = (ms: number) =>
  Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : `${ms} ms since 1970`;
/** The largest time a JavaScript Date holds (ECMA-262 21.4.1.1). */
const MAX_DATE_MS = 8.64e15;

/** Seconds from the delete to finishedAt, from the API's whole-second times alone. */
export function apiSecondsToEnd({ o, timeline }: Facts): number | null {
  const ack = timeline.deleteAcknowledged,
    finishedAt = o.finalState?.finishedAt;
  if (!ack || !finishedAt) return null;
  // deletionTimestamp = delete time + grace, so finishedAt - (deletionTimestamp - grace) is the API's view.
  const deletedAt = wallMs(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000;
  return (wallMs(finishedAt) - deletedAt) / 1000;
}

export function citationChecks(f: Facts): Check[] {
  return [timelineDerived(f), apiTimes(f)];
}
