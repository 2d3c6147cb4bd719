// The bars a report draws, in seconds from the delete; every bar keeps its source.
import type { Observation } from '../observation/schema.ts';
import { parseLogLineJson } from '../observation/timeline.ts';
import { parseLedgerLine } from '../../server/contract-schemas.ts';
import type { Prediction } from './theory.ts';
import type { TimelineBar } from './types.ts';
import { wallMs } from './wall-time.ts';

type Point = { source: 'container-log'; at: { time: string } } | { source: 'inferred'; at: { wall: string } };

/**
 * `outcome`: the request's as the grade shows it (`interrupted` when the run's own stop ended it).
 * `serverDeleteWallMs`: the delete placed on the servers' clock as the model places it (kubelet-times.ts `anchor`:
 * the request's accepted line plus the harness's wait), so that a server's line sits where the model's words put
 * it; without one, a server's wall time is read against the harness's own wall time of the delete.
 */
export function timelineBars(
  o: Observation,
  p: Prediction,
  outcome: string = o.request.outcome,
  serverDeleteWallMs: number | null = null,
): TimelineBar[] {
  const origin = o.timeline.deleteIssued;
  if (!origin) return [];
  const fromHarness = (mono: number) => (mono - origin.at.mono) / 1000;
  const serverOrigin = serverDeleteWallMs ?? wallMs(origin.at.wall);
  const fromWall = (wall: string) => (wallMs(wall) - serverOrigin) / 1000;
  const fromPoint = (point: Point) =>
    point.source === 'container-log'
      ? fromWall(point.at.time)
      : (wallMs(point.at.wall) - wallMs(origin.at.wall)) / 1000;
  const bars: TimelineBar[] = [];
  const t = o.timeline;
  if (t.requestAccepted) {
    const end = t.requestEnded ? fromHarness(t.requestEnded.at.mono) : fromHarness(t.requestAccepted.at.mono);
    bars.push({
      label: `request ${outcome}`,
      kind: 'request',
      start: fromHarness(t.requestAccepted.at.mono),
      end,
      source: 'harness',
    });
    // The model's end of the work, on the same axis: where the request would have finished had nothing cut it.
    bars.push({
      label: `work ${p.outcome === 'cut' ? 'would end' : 'ends'} (model)`,
      kind: 'request',
      start: p.workEndsAt,
      end: p.workEndsAt,
      source: 'model',
    });
  }
  // The grace is the kubelet's budget: it runs from when the kubelet began the kill sequence (its hook, else
  // TERM), not from the delete or the active deadline that asked for it.
  const from = p.kubeletBeganAt;
  bars.push({
    label: `kubelet began${p.cause === 'deadline' ? ' (after the active deadline)' : ''}`,
    kind: 'grace',
    start: from,
    end: from,
    source: 'model',
  });
  bars.push({
    label: `grace ${p.graceSeconds}s`,
    kind: 'grace',
    start: from,
    end: from + p.graceSeconds,
    source: 'model',
  });
  // A pod with a sidecar: the app's own bars go in its lane, and every sidecar gets one of its own.
  const records = o.containers ?? [];
  const laneOf = (c: (typeof records)[number]) =>
    `${c.name} (${c.role === 'app' ? 'app' : c.native ? 'native sidecar' : 'regular container'})`;
  const appLane = records.length > 1 ? laneOf(records[0]!) : undefined;
  const first = bars.length;
  if (t.hookStart) {
    const start = fromPoint(t.hookStart);
    // A hook with no end of its own was left running when the kubelet moved on: draw it to TERM.
    const movedOn = !t.hookEnd && t.termReceived ? fromWall(t.termReceived.at.time) : null;
    const end = t.hookEnd ? fromPoint(t.hookEnd) : (movedOn ?? start);
    bars.push({
      label: movedOn === null ? 'preStop hook' : 'preStop hook (still running at TERM)',
      kind: 'hook',
      start,
      end,
      source: t.hookStart.source,
    });
  }
  if (t.termReceived) {
    const at = fromWall(t.termReceived.at.time);
    bars.push({ label: t.termReceived.signal, kind: 'term', start: at, end: at, source: 'container-log' });
  }
  if (t.containerTerminated) {
    const at = fromHarness(t.containerTerminated.at.mono);
    bars.push({
      label: `terminated ${o.finalState?.exitCode ?? '?'}`,
      kind: 'terminated',
      start: at,
      end: at,
      source: 'harness',
    });
  }
  // The model's SIGKILL: when the kubelet kills what still runs (a container that ended before needs none).
  bars.push({
    label: `SIGKILL (model${p.exitAt < p.killAt ? ', not needed' : ''})`,
    kind: 'kill',
    start: p.killAt,
    end: p.killAt,
    source: 'model',
  });
  if (appLane) for (const bar of bars.slice(first)) bar.lane = appLane;
  if (o.retries) retryLanes(o, o.retries, bars, first, fromHarness, fromWall);
  for (const c of records.slice(1)) {
    const lane = laneOf(c);
    if (c.hookStart) {
      const start = fromWall(c.hookStart.at.time);
      const end = c.hookEnd ? fromWall(c.hookEnd.at.time) : c.termReceived ? fromWall(c.termReceived.at.time) : start;
      bars.push({ label: 'preStop hook', kind: 'hook', start, end, source: 'container-log', lane });
    }
    if (c.termReceived) {
      const at = fromWall(c.termReceived.at.time);
      bars.push({ label: c.termReceived.signal, kind: 'term', start: at, end: at, source: 'container-log', lane });
    }
    if (c.terminated) {
      const at = fromHarness(c.terminated.at.mono);
      bars.push({
        label: `terminated ${c.finalState?.exitCode ?? '?'}`,
        kind: 'terminated',
        start: at,
        end: at,
        source: 'harness',
        lane,
      });
    }
  }
  return bars;
}

/**
 * A retry scenario: one lane per attempt (its request, and the ledger's effects for it marked on the same
 * axis), and the deleted pod's own hook, TERM and end in a lane of its own.
 */
function retryLanes(
  o: Observation,
  r: NonNullable<Observation['retries']>,
  bars: TimelineBar[],
  podBars: number,
  fromHarness: (mono: number) => number,
  fromWall: (wall: string) => number,
): void {
  const pod = (target: 'deleted' | 'standby') =>
    target === 'deleted' ? `pod A (deleted) ${o.pod?.name ?? ''}` : `pod B (standby) ${r.standby?.name ?? ''}`;
  const laneOf = (a: (typeof r.attempts)[number]) => `attempt ${a.n} to ${a.target === 'deleted' ? 'pod A' : 'pod B'}`;
  for (const bar of bars.slice(podBars)) bar.lane = pod('deleted');
  const first = r.attempts[0];
  const request = bars.find((b) => b.kind === 'request' && !b.lane);
  if (request && first) {
    request.lane = laneOf(first);
    request.label = `attempt 1 ${first.outcome}`;
    for (const bar of bars) if (bar.kind === 'request' && !bar.lane) bar.lane = laneOf(first);
  }
  for (const a of r.attempts.slice(1)) {
    const from = a.accepted ?? a.sent;
    if (!from) continue;
    bars.push({
      label: `attempt ${a.n} ${a.outcome}`,
      kind: 'request',
      start: fromHarness(from.mono),
      end: fromHarness((a.ended ?? from).mono),
      source: 'harness',
      lane: laneOf(a),
    });
  }
  const byId = new Map(r.attempts.map((a) => [a.id, a]));
  for (const l of r.ledger?.logLines ?? []) {
    const parsed = parseLedgerLine(parseLogLineJson(l.text));
    if (parsed.kind !== 'event' || (parsed.event !== 'applied' && parsed.event !== 'already-applied')) continue;
    const line = parsed.line as { id: string; seq: number; time: string };
    const a = byId.get(line.id);
    const at = fromWall(line.time);
    bars.push({
      label: parsed.event === 'applied' ? `effect record ${line.seq}` : `already applied (record ${line.seq})`,
      kind: 'effect',
      start: at,
      end: at,
      source: 'container-log',
      lane: a ? laneOf(a) : 'ledger',
    });
  }
}
