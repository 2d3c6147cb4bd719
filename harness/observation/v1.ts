// Version 1 of the observation file, still read and graded: upgraded in memory to the current
// shape, its citations found by the same rule the runner now uses. A citation that cannot be
// found points past the end of its list, so the grader's citation check names it.
import { z } from 'zod';
import {
  ContainerLogTimeSchema,
  HarnessTimeSchema,
  OBSERVATION_SCHEMA_VERSION,
  ObservationSchema,
  TimelineSchema,
  WatchEventSchema,
  type Observation,
} from './schema.ts';

const LoggedV1 = z.object({ source: z.literal('container-log'), at: ContainerLogTimeSchema });
const InferredV1 = z.object({ source: z.literal('inferred'), at: HarnessTimeSchema, basis: z.string() });
const HookPointV1 = z.discriminatedUnion('source', [LoggedV1, InferredV1]).nullable();
const SeenV1 = z.object({ at: HarnessTimeSchema, resourceVersion: z.string() }).nullable();

export const ObservationV1Schema = ObservationSchema.extend({
  schemaVersion: z.literal(1),
  timeline: TimelineSchema.extend({
    hookStart: HookPointV1,
    hookEnd: HookPointV1,
    termReceived: LoggedV1.extend({ signal: z.string() }).nullable(),
    containerTerminated: SeenV1,
    podDeleted: SeenV1,
  }),
  request: ObservationSchema.shape.request.omit({ sha256: true, done: true, podUid: true }),
  finalState: ObservationSchema.shape.finalState
    .unwrap()
    .omit({ container: true, from: true })
    .extend({ fromEvent: z.object({ type: z.string(), resourceVersion: z.string() }) })
    .nullable(),
});
export type ObservationV1 = z.infer<typeof ObservationV1Schema>;

type WatchType = z.infer<typeof WatchEventSchema>['type'];
const watchTypes = WatchEventSchema.shape.type.options as readonly string[];

export function upgradeV1(v1: ObservationV1): Observation {
  const { logLines, watchEvents } = v1.evidence;
  const lineOf = (at: { time: string; mono: number }) => {
    const index = logLines.findIndex(
      (l) => l.text.includes(`"time":"${at.time}"`) && l.text.includes(`"mono":${at.mono}`),
    );
    return index >= 0 ? index : logLines.length;
  };
  const typeOf = (resourceVersion: string, fallback: WatchType): WatchType =>
    watchEvents.find((e) => e.resourceVersion === resourceVersion)?.type ?? fallback;
  const hookPoint = (point: z.infer<typeof HookPointV1>): Observation['timeline']['hookStart'] => {
    if (!point) return null;
    if (point.source === 'container-log') return { ...point, from: { kind: 'log', line: lineOf(point.at) } };
    const event = watchEvents.find((e) => e.receivedAt.mono === point.at.mono);
    if (event) return { ...point, from: { kind: 'watch', type: event.type, resourceVersion: event.resourceVersion } };
    const line = logLines.findIndex((l) => l.receivedAt.mono === point.at.mono);
    return { ...point, from: line >= 0 ? { kind: 'log', line } : { kind: 'harness', point: 'deleteIssued' } };
  };
  const seen = (point: z.infer<typeof SeenV1>, fallback: WatchType) =>
    point
      ? {
          at: point.at,
          from: {
            kind: 'watch' as const,
            type: typeOf(point.resourceVersion, fallback),
            resourceVersion: point.resourceVersion,
          },
        }
      : null;
  const t = v1.timeline;
  const final = v1.finalState;
  const cited = final && watchEvents.find((e) => e.resourceVersion === final.fromEvent.resourceVersion);
  return {
    ...v1,
    schemaVersion: OBSERVATION_SCHEMA_VERSION,
    timeline: {
      ...t,
      hookStart: hookPoint(t.hookStart),
      hookEnd: hookPoint(t.hookEnd),
      termReceived: t.termReceived
        ? { ...t.termReceived, from: { kind: 'log', line: lineOf(t.termReceived.at) } }
        : null,
      containerTerminated: seen(t.containerTerminated, 'MODIFIED'),
      podDeleted: seen(t.podDeleted, 'DELETED'),
    },
    request: { ...v1.request, sha256: null, done: null, podUid: null },
    finalState: final && {
      exitCode: final.exitCode,
      reason: final.reason,
      signal: final.signal,
      startedAt: final.startedAt,
      finishedAt: final.finishedAt,
      message: final.message,
      container: cited?.containers.find((c) => c.state === 'terminated')?.name ?? v1.pod?.containers[0]?.name ?? '',
      from: {
        kind: 'watch',
        type: (watchTypes.includes(final.fromEvent.type) ? final.fromEvent.type : 'ERROR') as WatchType,
        resourceVersion: final.fromEvent.resourceVersion,
      },
    },
  };
}
