// Every derived time cites where it came from; the grader follows each citation and also checks
// that the cited source is the one the rule picks (the first TERM line, the first end seen).
import type { Observation } from '../observation.ts';
import { carriesPod, describeCitation, describeLine, labContainer, labLines, resolveState, stateSources, type LabLine, watchHadGap } from './sources.ts';
import { KUBELET_EXTRA_DELAY_SECONDS, TOLERANCE_SECONDS } from './theory.ts';
import { fail, pass, type Check } from './types.ts';

/** The whole seconds of API times: each end of a difference may be off by up to this. */
const API_PRECISION_SECONDS = 1;
/** How late the kubelet may report an end it saw (its 1 s relist plus the delay newer kubelets add). */
const STATUS_DELAY_SECONDS = KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;

type LoggedPoint = { source: 'container-log'; at: { time: string; mono: number }; from: { kind: 'log'; line: number } };
type HookPoint = Observation['timeline']['hookStart'];

/** A logged point must be the first line of its event, cited by index, with the same times. */
function loggedPoint(name: string, point: LoggedPoint | null, first: LabLine | undefined): string | null {
  if (!point) return first ? `the container log has ${describeLine(first)} but the timeline has no ${name}` : null;
  if (!first) return `the timeline's ${name} has no log line behind it`;
  if (point.from.line !== first.line) return `the timeline's ${name} cites log line ${point.from.line}, but the first such line is ${first.line}`;
  if (point.at.time !== first.time || point.at.mono !== first.mono) return `the timeline's ${name} (${point.at.time}) differs from ${describeLine(first)} (${first.time})`;
  return null;
}

function inferredPoint(o: Observation, name: string, point: Extract<NonNullable<HookPoint>, { source: 'inferred' }>): string | null {
  const from = point.from;
  let mono: number | undefined;
  if (from.kind === 'log') mono = o.evidence.logLines[from.line]?.receivedAt.mono;
  else if (from.kind === 'harness') mono = o.timeline.deleteIssued?.at.mono;
  else mono = o.evidence.watchEvents.find((e) => carriesPod(e) && e.type === from.type && e.resourceVersion === from.resourceVersion)?.receivedAt.mono;
  if (mono === undefined) return `the timeline's inferred ${name} cites ${from.kind === 'log' ? `log line ${from.line}` : from.kind === 'harness' ? 'the delete, which was never issued' : `watch event ${from.type}@${from.resourceVersion}`}, which is not in the evidence`;
  if (mono !== point.at.mono) return `the timeline's inferred ${name} is at ${point.at.mono} ms but its source was received at ${mono} ms`;
  return null;
}

function timelineCited(o: Observation): Check {
  const id = 'evidence.timeline-cited';
  const t = o.timeline;
  const lines = labLines(o);
  const first = (event: string) => lines.find((l) => l.event === event);
  const problems: (string | null)[] = [];
  const hookInContainer = o.scenario.preStop.kind === 'exec-sleep' || o.scenario.preStop.kind === 'httpGet';
  for (const [name, point, event] of [['hook start', t.hookStart, 'hook-start'], ['hook end', t.hookEnd, 'hook-end']] as const) {
    if (point?.source === 'inferred') {
      problems.push(hookInContainer ? `the timeline's ${name} is inferred, but this hook logs its own` : inferredPoint(o, name, point));
      if (first(event)) problems.push(`the timeline's ${name} is inferred although ${describeLine(first(event)!)} shows it`);
    } else {
      problems.push(loggedPoint(name, point, first(event)));
    }
  }
  const term = first('signal');
  problems.push(loggedPoint('TERM', t.termReceived, term));
  if (t.termReceived && term && t.termReceived.signal !== String(term.fields.signal)) problems.push(`the timeline's TERM says ${t.termReceived.signal}, ${describeLine(term)} says ${String(term.fields.signal)}`);

  const container = labContainer(o);
  const firstEnd = stateSources(o).find((s) => s.containers.some((c) => c.name === container && c.state === 'terminated'));
  if (t.containerTerminated) {
    const cited = resolveState(o, t.containerTerminated.from);
    if (typeof cited === 'string') problems.push(`the timeline's container end cites ${cited}`);
    else if (cited.at !== t.containerTerminated.at.mono) problems.push(`the timeline's container end is at ${t.containerTerminated.at.mono} ms, but ${describeCitation(t.containerTerminated.from)} was received at ${cited.at} ms`);
    else if (!cited.containers.some((c) => c.name === container && c.state === 'terminated')) problems.push(`the timeline's container end cites ${describeCitation(t.containerTerminated.from)}, which does not show it terminated`);
    else if (firstEnd && firstEnd.receivedAt < cited.at && firstEnd.citation.kind === 'watch') problems.push(`the timeline's container end cites ${describeCitation(t.containerTerminated.from)}, but ${describeCitation(firstEnd.citation)} showed it earlier`);
  } else if (firstEnd) {
    problems.push(`the timeline has no container end, but ${describeCitation(firstEnd.citation)} shows one`);
  }
  if (t.podDeleted) {
    const from = t.podDeleted.from;
    if (from.kind === 'watch') {
      const event = o.evidence.watchEvents.find((e) => e.type === 'DELETED' && e.resourceVersion === from.resourceVersion);
      if (from.type !== 'DELETED' || !event) problems.push(`the timeline's pod deletion cites watch event ${from.type}@${from.resourceVersion}, which is not a DELETED event in the evidence`);
      else if (event.receivedAt.mono !== t.podDeleted.at.mono) problems.push(`the timeline's pod deletion time differs from ${from.type}@${from.resourceVersion}'s`);
    } else {
      const read = o.evidence.podReads[from.index];
      if (!read || read.found) problems.push(`the timeline's pod deletion cites pod read ${from.index}, which did not find the pod gone`);
      else if (read.at.mono !== t.podDeleted.at.mono) problems.push(`the timeline's pod deletion time differs from pod read ${from.index}'s`);
    }
  }
  const found = problems.filter((p): p is string => p !== null);
  return found.length ? fail(id, found[0]!) : pass(id, 'every time on the timeline is the one its cited log line, watch event or pod read gives');
}

/** The API's own times and the harness clock measure the same span: they must agree. */
function apiTimes(o: Observation): Check {
  const id = 'evidence.api-times';
  const ack = o.timeline.deleteAcknowledged, final = o.finalState;
  if (final?.startedAt && final.finishedAt && Date.parse(final.finishedAt) < Date.parse(final.startedAt)) return fail(id, `the container finished (${final.finishedAt}) before it started (${final.startedAt})`);
  if (!ack || !final?.finishedAt || !o.timeline.deleteIssued || !o.timeline.containerTerminated) return pass(id, 'no API end time to compare with the harness clock');
  const api = apiSecondsToEnd(o)!;
  const seen = (o.timeline.containerTerminated.at.mono - o.timeline.deleteIssued.at.mono) / 1000;
  // The API stamped its deletion somewhere between the harness's delete and its answer: a busy API
  // server stamps late, so the span on the harness clock is bounded from the answer below.
  const seenFromAnswer = (o.timeline.containerTerminated.at.mono - Math.max(ack.at.mono, o.timeline.deleteIssued.at.mono)) / 1000;
  const both = `finishedAt puts the end ${api.toFixed(1)}s after the delete (API times), but the watch saw it end ${seen.toFixed(1)}s after it (harness clock${seenFromAnswer < seen - API_PRECISION_SECONDS ? `; ${seenFromAnswer.toFixed(1)}s after the delete's answer` : ''})`;
  // The container cannot have ended after the watch saw it end, nor long before the kubelet said so.
  // After a watch gap the harness saw the end only once the API was back: then it bounds from above alone.
  const seenLate = watchHadGap(o, o.timeline.containerTerminated.at.mono);
  if (api > seen + API_PRECISION_SECONDS || (!seenLate && api < seenFromAnswer - API_PRECISION_SECONDS - STATUS_DELAY_SECONDS)) return fail(id, both);
  const deletedAt = Date.parse(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000;
  // The container ran before the request was accepted: startedAt is before the delete by at least that delay.
  const acceptedAt = deletedAt - (o.timeline.requestAccepted ? o.timeline.deleteIssued.at.mono - o.timeline.requestAccepted.at.mono : 0);
  if (final.startedAt && Date.parse(final.startedAt) > acceptedAt + API_PRECISION_SECONDS * 1000) return fail(id, `startedAt (${final.startedAt}) is after the request was accepted (${isoTime(acceptedAt)}, from the deletionTimestamp and the harness clock)`);
  return pass(id, `the API's times (end ${api.toFixed(1)}s after the delete) agree with the harness clock (${seen.toFixed(1)}s)`);
}

/** A time for a message; a file's extreme times give an out-of-range Date, which must not throw. */
const isoTime = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : `${ms} ms since 1970`);
/** The largest time a JavaScript Date holds (ECMA-262 21.4.1.1). */
const MAX_DATE_MS = 8.64e15;

/** Seconds from the delete to finishedAt, from the API's whole-second times alone. */
export function apiSecondsToEnd(o: Observation): number | null {
  const ack = o.timeline.deleteAcknowledged, finishedAt = o.finalState?.finishedAt;
  if (!ack || !finishedAt) return null;
  // deletionTimestamp = delete time + grace, so finishedAt - (deletionTimestamp - grace) is the API's view.
  const deletedAt = Date.parse(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000;
  return (Date.parse(finishedAt) - deletedAt) / 1000;
}

export function citationChecks(o: Observation): Check[] {
  return [timelineCited(o), apiTimes(o)];
}
