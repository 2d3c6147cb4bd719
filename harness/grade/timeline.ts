// The bars a report draws, in seconds from the delete; every bar keeps its source.
import type { Observation } from '../observation.ts';
import type { Prediction } from './theory.ts';
import type { TimelineBar } from './types.ts';

type Point = { source: 'container-log'; at: { time: string } } | { source: 'inferred'; at: { wall: string } };

export function timelineBars(o: Observation, p: Prediction): TimelineBar[] {
  const origin = o.timeline.deleteIssued;
  if (!origin) return [];
  const fromHarness = (mono: number) => (mono - origin.at.mono) / 1000;
  const fromWall = (wall: string) => (Date.parse(wall) - Date.parse(origin.at.wall)) / 1000;
  const fromPoint = (point: Point) => fromWall(point.source === 'container-log' ? point.at.time : point.at.wall);
  const bars: TimelineBar[] = [];
  const t = o.timeline;
  if (t.requestAccepted) {
    const end = t.requestEnded ? fromHarness(t.requestEnded.at.mono) : fromHarness(t.requestAccepted.at.mono);
    bars.push({ label: `request ${o.request.outcome}`, kind: 'request', start: fromHarness(t.requestAccepted.at.mono), end, source: 'harness' });
  }
  // The grace runs from what started the kill: the delete, or the active deadline before it.
  const from = p.deadlineAt ?? 0;
  bars.push({ label: `grace ${p.graceSeconds}s${p.cause === 'deadline' ? ' (from the active deadline)' : ''}`, kind: 'grace', start: from, end: from + p.graceSeconds, source: 'model' });
  if (t.hookStart) {
    const start = fromPoint(t.hookStart);
    // A hook with no end of its own was left running when the kubelet moved on: draw it to TERM.
    const movedOn = !t.hookEnd && t.termReceived ? fromWall(t.termReceived.at.time) : null;
    const end = t.hookEnd ? fromPoint(t.hookEnd) : movedOn ?? start;
    bars.push({ label: movedOn === null ? 'preStop hook' : 'preStop hook (still running at TERM)', kind: 'hook', start, end, source: t.hookStart.source });
  }
  if (t.termReceived) {
    const at = fromWall(t.termReceived.at.time);
    bars.push({ label: t.termReceived.signal, kind: 'term', start: at, end: at, source: 'container-log' });
  }
  if (t.containerTerminated) {
    const at = fromHarness(t.containerTerminated.at.mono);
    bars.push({ label: `terminated ${o.finalState?.exitCode ?? '?'}`, kind: 'terminated', start: at, end: at, source: 'harness' });
  }
  return bars;
}
