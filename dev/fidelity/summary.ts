// One scenario run, reduced to what the fidelity comparison looks at. Pure: observation in, summary out.
import { z } from 'zod';
import type { Observation } from '../../harness/observation/schema.ts';
import { ledgerEffectCount, ledgerLines } from '../../harness/grade/retries.ts';
import { parseLabLogLines } from '../../harness/observation/timeline.ts';
import { podDeadlineSeconds } from '../../harness/safety/deadline.ts';
import { HOLD_FINALIZER } from '../../harness/safety/labels.ts';
import { EdgeRunSummarySchema } from './edge-summary.ts';

export const OFFSETS = [
  'hookStart',
  'term',
  'ended',
  'deleted',
  'reaction',
  'reactionToTerm',
  'reactionToEnded',
  'endedToDeleted',
  'endedToLogEnd',
  'releasedToDeleted',
  'sidecarTerm',
  'reactionToSidecarTerm',
  'sidecarTermToEnded',
  'verdict',
  'verdictToTerm',
  'termToEnded',
  'died',
  'reactionToDied',
  'termToDied',
  'sidecarTermToDied',
  'diedToEnded',
] as const;
export type OffsetName = (typeof OFFSETS)[number];
export const OFFSET_LABELS: Record<OffsetName, string> = {
  hookStart: 'delete→hook start',
  term: 'delete→TERM',
  ended: 'delete→container ended',
  deleted: 'delete→DELETED',
  reaction: 'delete→kubelet reaction',
  reactionToTerm: 'reaction→TERM',
  reactionToEnded: 'reaction→container ended (cut)',
  endedToDeleted: 'container ended→DELETED',
  endedToLogEnd: 'container ended→log stream ended (its removal)',
  releasedToDeleted: "harness's finalizer removed→DELETED",
  sidecarTerm: 'delete→sidecar TERM',
  reactionToSidecarTerm: 'reaction→sidecar TERM',
  sidecarTermToEnded: 'sidecar TERM→sidecar ended',
  verdict: 'deadline→kubelet verdict',
  verdictToTerm: 'verdict→TERM',
  termToEnded: 'TERM→container ended',
  died: 'delete→container died',
  reactionToDied: 'reaction→container died (cut)',
  termToDied: 'TERM→container died',
  sidecarTermToDied: 'sidecar TERM→sidecar died',
  diedToEnded: "container died→seen ended (the runtime's teardown)",
};

/**
 * Each "ended" offset, which the watch's sighting of the end decides, and its "died" twin, which the container's death
 * decides. Between the two is the runtime's teardown (StopContainer's exit handling, StopPodSandbox's CNI teardown,
 * the status write): on the v1.37.2 node 0.12-1.36 s, median 0.40, over 48 ends in one matrix, longer as the node is
 * busier (containerd's log: each step stretches), so a scenario's median of three lands anywhere in it.
 */
export const DIED_TWIN: Partial<Record<OffsetName, OffsetName>> = {
  ended: 'died',
  reactionToEnded: 'reactionToDied',
  termToEnded: 'termToDied',
  sidecarTermToEnded: 'sidecarTermToDied',
};

/** When a run's containers died, wall ms, from the side's own runtime record of a SIGKILL (null when it sent none or it is unknown). */
export interface Kills {
  app: number | null;
  sidecar: number | null;
}

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
  offsets: z.object({
    hookStart: z.number().nullable(),
    term: z.number().nullable(),
    ended: z.number().nullable(),
    deleted: z.number().nullable(),
    // Only for a pod the kubelet ended on its own before the delete (activeDeadlineSeconds); absent in older files.
    verdict: z.number().nullable().optional(),
    verdictToTerm: z.number().nullable().optional(),
    termToEnded: z.number().nullable().optional(),
    // From the kubelet's reaction to the delete (absent in older files): its first act, the hook's start, else TERM
    // (a sleep action leaves no line: TERM less the sleep, a timer in the kubelet); what a cut ended by; the DELETED after the end.
    reaction: z.number().nullable().optional(),
    reactionToTerm: z.number().nullable().optional(),
    reactionToEnded: z.number().nullable().optional(),
    endedToDeleted: z.number().nullable().optional(),
    // The kubelet's part of the end, without the harness's (absent in older files): the container seen ended → the
    // log stream's end (the kubelet's reader wakes when the kubelet removes the dead container, or looks again after
    // a second); the harness's answer to its finalizer's removal → DELETED (later only if the kubelet's own grace-0
    // delete was). In between the harness reads the events and closes its port-forward before it lets the pod go.
    endedToLogEnd: z.number().nullable().optional(),
    releasedToDeleted: z.number().nullable().optional(),
    // A pod with a sidecar (absent otherwise): its TERM (its own log), from the delete and from the reaction, and its
    // end (the watch) after it.
    sidecarTerm: z.number().nullable().optional(),
    reactionToSidecarTerm: z.number().nullable().optional(),
    sidecarTermToEnded: z.number().nullable().optional(),
    // The same ends by the container's death (its exit line, else the SIGKILL: the kubelet's through the runtime or the
    // kernel's for the memory limit; absent in older files), and the runtime's teardown after it (DIED_TWIN).
    died: z.number().nullable().optional(),
    reactionToDied: z.number().nullable().optional(),
    termToDied: z.number().nullable().optional(),
    sidecarTermToDied: z.number().nullable().optional(),
    diedToEnded: z.number().nullable().optional(),
  }),
  /** The app's log says it completed the request: its end followed its work, whatever the client got through a proxy. Absent in older files. */
  workCompleted: z.boolean().optional(),
  /** The pod's sidecar (a proxy in front of the app): native (an init container, restartPolicy Always), its exit code and reason. */
  sidecar: z
    .object({ native: z.boolean(), exitCode: z.int().nullable(), reason: z.string().nullable() })
    .nullable()
    .optional(),
  /**
   * Seconds the lab port was closed (the server's draining or exit line) before the container was seen ended:
   * the span a readiness probe must fail in. Null without either line; absent in older files.
   */
  portClosedSeconds: z.number().nullable().optional(),
  /**
   * A retry scenario (issue 27): each attempt's pod (the deleted one or the standby) and how it ended, and the
   * effects the ledger's own lines count. Null for a scenario without retries; absent in older files.
   */
  retries: z.object({ attempts: z.string(), effects: z.string() }).nullable().optional(),
  /** ms from the kubelet launching the exec hook to the hook's own first line, when both are known. */
  hookLaunchLagMs: z.number().nullable(),
  /** The hook process's age at its first line (lab-hook's procAgeMs, 10 ms steps): from its creation, so on a real node it includes runc init. */
  hookProcAgeMs: z.number().nullable().optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const SideFileSchema = z.object({
  side: z.enum(['sim', 'node']),
  cluster: z.string(),
  recordedAt: z.string(),
  runs: z.array(RunSummarySchema),
  /** The edge scenarios' runs (manifests/edge.yaml through the side's edge); absent in older files. */
  edgeRuns: z.array(EdgeRunSummarySchema).optional(),
});
export type SideFile = z.infer<typeof SideFileSchema>;

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * The kubelet's own verdict on a pod it ends before any delete (the active deadline): the first
 * status after Ready that turns Ready off while the container still runs and nothing asked for deletion.
 */
function kubeletVerdict(o: Observation): { at: number; deadline: number } | null {
  // Only a deadline ends a pod this way in the matrix; a probe that times out under load must not look like one.
  if (!o.scenario.activeDeadlineSeconds) return null;
  // The pod's own deadline, as the harness rendered it (never past the harness's cap).
  const seconds = Math.min(podDeadlineSeconds(o.scenario), o.scenario.activeDeadlineSeconds);
  const deleteAt = o.timeline.deleteIssued ? Date.parse(o.timeline.deleteIssued.at.wall) : Infinity;
  const ready = (e: Observation['evidence']['watchEvents'][number]) =>
    e.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  const events = o.evidence.watchEvents;
  const firstReady = events.findIndex(ready);
  if (firstReady < 0) return null;
  const startTime = events.find((e) => e.startTime)?.startTime;
  // Without the start time (a file from before it was recorded) nothing tells a verdict from a failed probe.
  if (!startTime) return null;
  const deadline = Date.parse(startTime) + seconds * 1000;
  // Not before the deadline: a readiness probe that failed earlier is not the verdict.
  const verdict = events
    .slice(firstReady)
    .find(
      (e) =>
        !ready(e) &&
        !e.deletionTimestamp &&
        e.containers.some((c) => c.state === 'running') &&
        Date.parse(e.receivedAt.wall) >= deadline,
    );
  if (!verdict || Date.parse(verdict.receivedAt.wall) >= deleteAt) return null;
  return { at: Date.parse(verdict.receivedAt.wall), deadline };
}

export function summarize(
  o: Observation,
  repetition: number,
  hookLaunchedAt: number | null,
  kills: Kills = { app: null, sidecar: null },
): RunSummary {
  const t = o.timeline;
  const origin = t.deleteIssued ? Date.parse(t.deleteIssued.at.wall) : null;
  const between = (from: number | null, to: number | null) =>
    from === null || to === null ? null : round((to - from) / 1000);
  const at = (wall: string | undefined) => (wall === undefined ? null : Date.parse(wall));
  const lastPhase = [...o.evidence.watchEvents].reverse().find((e) => e.phase !== null)?.phase ?? null;
  const hookLine = t.hookStart?.source === 'container-log' ? Date.parse(t.hookStart.at.time) : null;
  const termAt = at(t.termReceived?.at.time);
  const endedAt = at(t.containerTerminated?.at.wall);
  const verdict = kubeletVerdict(o);
  const deletedAt = at(t.podDeleted?.at.wall);
  const logEndAt = at(o.evidence.logStreamEnded?.wall);
  const releasedAt = at(
    o.cleanup.find((c) => c.ok && c.error === null && c.action === `remove finalizer ${HOLD_FINALIZER}`)?.at.wall,
  );
  const preStop = o.scenario.preStop;
  const reactionAt =
    hookLine ?? (termAt === null ? null : preStop.kind === 'sleep-action' ? termAt - preStop.seconds * 1000 : termAt);
  const proxy = o.containers?.find((c) => c.role === 'sidecar') ?? null;
  const proxyTermAt = at(proxy?.termReceived?.at.time);
  const app = o.containers?.find((c) => c.role === 'app');
  // Its own exit line comes first: a container that logged its exit was not killed.
  const diedAt = at(app?.exitLogged?.at.time) ?? kills.app;
  const proxyDiedAt = at(proxy?.exitLogged?.at.time) ?? kills.sidecar;
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
    // A pod the kubelet ended before the delete is timed from its verdict: the harness's own delay
    // after acceptance says nothing about the kubelet.
    offsets: {
      deleted: between(origin, deletedAt),
      endedToLogEnd: between(endedAt, logEndAt),
      releasedToDeleted: between(releasedAt, deletedAt),
      ...(verdict
        ? {
            hookStart: null,
            term: null,
            ended: null,
            reaction: null,
            reactionToTerm: null,
            reactionToEnded: null,
            endedToDeleted: null,
            verdict: between(verdict.deadline, verdict.at),
            verdictToTerm: between(verdict.at, termAt),
            termToEnded: between(termAt, endedAt),
            died: null,
            reactionToDied: null,
            termToDied: between(termAt, diedAt),
          }
        : {
            hookStart: between(origin, hookLine),
            term: between(origin, termAt),
            ended: between(origin, endedAt),
            reaction: between(origin, reactionAt),
            reactionToTerm: hookLine === null ? null : between(hookLine, termAt),
            reactionToEnded: o.request.outcome === 'cut' ? between(reactionAt, endedAt) : null,
            endedToDeleted: between(endedAt, deletedAt),
            verdict: null,
            verdictToTerm: null,
            termToEnded: null,
            died: between(origin, diedAt),
            reactionToDied: o.request.outcome === 'cut' ? between(reactionAt, diedAt) : null,
            termToDied: null,
          }),
      diedToEnded: between(diedAt, endedAt),
      ...(proxy
        ? {
            sidecarTerm: between(origin, proxyTermAt),
            reactionToSidecarTerm: verdict ? null : between(reactionAt, proxyTermAt),
            sidecarTermToEnded: between(proxyTermAt, at(proxy.terminated?.at.wall)),
            sidecarTermToDied: between(proxyTermAt, proxyDiedAt),
          }
        : {}),
    },
    workCompleted: parseLabLogLines(o.evidence.logLines).lines.some((l) => l.event === 'completed'),
    sidecar: proxy
      ? { native: proxy.native, exitCode: proxy.finalState?.exitCode ?? null, reason: proxy.finalState?.reason ?? null }
      : null,
    portClosedSeconds: portClosed(o, endedAt),
    retries: retriesSummary(o),
    hookLaunchLagMs: hookLine !== null && hookLaunchedAt !== null ? round(hookLine - hookLaunchedAt) : null,
    hookProcAgeMs: hookProcAge(o),
  };
}

/** The attempts as the client recorded them, and the ledger's effects counted from its log (not the runner's count). */
function retriesSummary(o: Observation): RunSummary['retries'] {
  if (!o.retries) return null;
  const count = ledgerEffectCount(ledgerLines(o.retries));
  return {
    attempts: o.retries.attempts.map((a) => `${a.target} ${a.outcome}`).join(' → '),
    effects: `${count.applied} applied, ${count.alreadyApplied} already applied`,
  };
}

/** From the lab server's first draining or exit line (server/app.ts: server.close(), or process.exit) to the container seen ended. */
function portClosed(o: Observation, endedAt: number | null): number | null {
  const closed = parseLabLogLines(o.evidence.logLines).lines.find((l) => l.event === 'draining' || l.event === 'exit');
  return closed && endedAt !== null ? round((endedAt - Date.parse(closed.time)) / 1000) : null;
}

function hookProcAge(o: Observation): number | null {
  const from = o.timeline.hookStart?.from;
  if (o.timeline.hookStart?.source !== 'container-log' || from?.kind !== 'log') return null;
  try {
    const age = JSON.parse(o.evidence.logLines[from.line]?.text ?? '').procAgeMs;
    return typeof age === 'number' ? age : null;
  } catch {
    return null;
  }
}
