// One scenario run, reduced to what the fidelity comparison looks at. Pure: observation in, summary out.
import { z } from 'zod';
import type { Observation } from '../../harness/observation.ts';

export const OFFSETS = ['hookStart', 'term', 'ended', 'deleted'] as const;
export type OffsetName = (typeof OFFSETS)[number];
export const OFFSET_LABELS: Record<OffsetName, string> = { hookStart: 'delete→hook start', term: 'delete→TERM', ended: 'delete→container ended', deleted: 'delete→DELETED' };

export const RunSummarySchema = z.object({
  scenario: z.string(),
  repetition: z.int(),
  complete: z.boolean(),
  incompleteReason: z.string().nullable(),
  outcome: z.string(),
  exitCode: z.int().nullable(),
  reason: z.string().nullable(),
  phase: z.string().nullable(),
  eventReasons: z.array(z.string()),
  /** Seconds after the delete was issued; null when the run did not show it. */
  offsets: z.object({ hookStart: z.number().nullable(), term: z.number().nullable(), ended: z.number().nullable(), deleted: z.number().nullable() }),
  /** ms from the kubelet launching the exec hook to the hook's own first line, when both are known. */
  hookLaunchLagMs: z.number().nullable(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const SideFileSchema = z.object({
  side: z.enum(['sim', 'node']),
  cluster: z.string(),
  recordedAt: z.string(),
  runs: z.array(RunSummarySchema),
});
export type SideFile = z.infer<typeof SideFileSchema>;

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

export function summarize(o: Observation, repetition: number, hookLaunchedAt: number | null): RunSummary {
  const t = o.timeline;
  const origin = t.deleteIssued ? Date.parse(t.deleteIssued.at.wall) : null;
  const since = (wall: string | undefined) => (origin === null || wall === undefined ? null : round((Date.parse(wall) - origin) / 1000));
  const lastPhase = [...o.evidence.watchEvents].reverse().find((e) => e.phase !== null)?.phase ?? null;
  const hookLine = t.hookStart?.source === 'container-log' ? Date.parse(t.hookStart.at.time) : null;
  return {
    scenario: o.scenario.name,
    repetition,
    complete: o.run.complete,
    incompleteReason: o.run.incompleteReason ?? null,
    outcome: o.request.outcome,
    exitCode: o.finalState?.exitCode ?? null,
    reason: o.finalState?.reason ?? null,
    phase: lastPhase,
    eventReasons: [...new Set(o.evidence.podEvents.map((e) => e.reason))].sort(),
    offsets: {
      hookStart: t.hookStart?.source === 'container-log' ? since(t.hookStart.at.time) : null,
      term: t.termReceived ? since(t.termReceived.at.time) : null,
      ended: since(t.containerTerminated?.at.wall),
      deleted: since(t.podDeleted?.at.wall),
    },
    hookLaunchLagMs: hookLine !== null && hookLaunchedAt !== null ? round(hookLine - hookLaunchedAt) : null,
  };
}
