// What a verification observation says about each pod, each time from its own source: deletion
// from the pod watch (and the API's stamp), TERM from the app's own log when it writes one (the lab
// image does) or else the kubelet's Killing event plus the pod's live preStop sleep, KILL from the
// container's exit 137, the endpoint's changes from the EndpointSlice watch. Seconds from the act.
import { describeLifecycle } from '../grade/rollout/theory.ts';
import { parseLabLogLines } from '../grade/sources.ts';
import { TOLERANCE_SECONDS } from '../grade/theory.ts';
import type { LiveContainer } from '../observation/rollout.ts';
import type { VerificationObservation } from '../observation/verification.ts';

export interface PodTimes {
  name: string;
  uid: string;
  /** Existed before the act (it is the one that terminates). */
  old: boolean;
  created: number | null;
  ready: number | null;
  deletion: number | null;
  /** The earliest sign it was terminating: the watch's deletion, the Killing event, or TERM (each seen late in its own way). */
  terminating: number | null;
  /** The API's deletion time (deletionTimestamp less the grace), whole seconds. */
  deletionApi: number | null;
  killing: number | null;
  term: number | null;
  termSource: string | null;
  /** The app's exit by its own log, or the container's end by the watch. */
  exited: number | null;
  exitCode: number | null;
  killed: boolean;
  /** First slice change that showed its endpoint not ready (terminating, or gone). */
  endpointNotReady: number | null;
  endpointGone: number | null;
  gone: number | null;
  /** The live pod's lifecycle (what it really ran) and grace. */
  preStop: string;
  preStopSleepSeconds: number | null;
  grace: number | null;
}

/**
 * Deleted by this run's act (times are from the act; a tick of slack for separate clocks), not by a rollout still
 * finishing when verify began: only those say what this Deployment's shutdown does now (their preStop, their count).
 */
export const deletedByTheAct = (p: PodTimes): boolean => p.deletion !== null && p.deletion >= -0.05;

export function originOf(o: VerificationObservation): number | null {
  return o.acted ? Date.parse(o.acted.at.wall) : null;
}

/** Time 0 of every time a verification shows: the action, else when the watches began, else the run's start. */
export function timeOriginOf(o: VerificationObservation): number {
  return originOf(o) ?? Date.parse(o.timeline.watchesEstablished?.wall ?? o.run.observedAt);
}

/** A preStop hook's sleep, when it is one: `sleep: {seconds}` or `exec: sleep N`. */
export function sleepSecondsOf(containers: LiveContainer[]): number | null {
  const hook = (containers[0]?.lifecycle as Record<string, any> | null)?.preStop;
  if (!hook) return null;
  if (typeof hook.sleep?.seconds === 'number') return hook.sleep.seconds;
  const command: unknown[] = hook.exec?.command ?? [];
  const text = command.map(String).join(' ');
  const m = /(?:^|\s)sleep\s+(\d+(?:\.\d+)?)(?:\s|$)/.exec(text);
  return m ? Number(m[1]) : null;
}

export function podTimes(o: VerificationObservation): PodTimes[] {
  const origin = timeOriginOf(o);
  const at = (wall: string | null | undefined) => (wall ? (Date.parse(wall) - origin) / 1000 : null);
  const oldUids = new Set((o.target?.pods ?? []).map((p) => p.uid));
  const actedMono = o.acted?.at.mono ?? Infinity;
  const app = o.evidence.podEvents.filter((e) => e.role !== 'load');
  const uids = [...new Set(app.map((e) => e.uid))];
  return uids.map((uid) => {
    const events = app.filter((e) => e.uid === uid);
    const first = events[0]!;
    const old = oldUids.has(uid) || first.receivedAt.mono < actedMono;
    const deletion = events.find((e) => e.deletionTimestamp !== null);
    const terminated = events.find((e) => e.containers.some((c) => c.state === 'terminated'));
    const exitState = terminated?.containers.find((c) => c.state === 'terminated');
    const live = o.liveReads.find((r) => r.found && r.uid === uid);
    const containers = live?.containers ?? first.spec;
    const sleep = sleepSecondsOf(containers);
    const log = o.evidence.podLogs.find((l) => l.uid === uid);
    const lines = log ? parseLabLogLines(log.lines).lines : [];
    const signal = lines.find((l) => l.event === 'signal');
    const exit = lines.find((l) => l.event === 'exit');
    const killing = o.evidence.kubeEvents.find((e) => e.involvedUid === uid && e.reason === 'Killing');
    const killingAt = killing ? at(killing.receivedAt.wall) : null;
    let term: number | null = null,
      termSource: string | null = null;
    if (signal) {
      term = at(signal.time);
      termSource = "the app's own log";
    } else if (killingAt !== null) {
      term = killingAt + (sleep ?? 0);
      termSource = sleep
        ? `the kubelet's Killing event + the ${sleep}s preStop sleep`
        : "the kubelet's Killing event (no preStop)";
    }
    // The endpoint's change that the deletion caused: a readiness blip before it (a starved probe) is not it.
    const deletionAt = at(deletion?.receivedAt.wall);
    let wasReady = false,
      endpointNotReady: number | null = null,
      endpointGone: number | null = null;
    for (const s of o.evidence.sliceEvents) {
      const ep = s.endpoints.find((x) => x.podUid === uid);
      if (ep?.ready) {
        wasReady = true;
        continue;
      }
      const t = at(s.receivedAt.wall)!;
      if (!wasReady || (deletionAt !== null && t < deletionAt - TOLERANCE_SECONDS)) continue;
      if (endpointNotReady === null && (!ep || ep.ready === false || s.type === 'DELETED')) endpointNotReady = t;
      if (endpointGone === null && (!ep || s.type === 'DELETED')) endpointGone = t;
    }
    const deletionApi =
      deletion?.deletionTimestamp && deletion.deletionGracePeriodSeconds !== null
        ? at(
            new Date(Date.parse(deletion.deletionTimestamp) - deletion.deletionGracePeriodSeconds * 1000).toISOString(),
          )
        : null;
    const deleted = events.find((e) => e.type === 'DELETED');
    return {
      name: first.name,
      uid,
      old,
      created: at(first.creationTimestamp) ?? at(first.receivedAt.wall),
      ready: at(events.find((e) => e.ready)?.receivedAt.wall),
      deletion: deletionAt,
      deletionApi,
      terminating: [deletionAt, killingAt, term].reduce<number | null>(
        (a, b) => (b === null ? a : a === null ? b : Math.min(a, b)),
        null,
      ),
      killing: killingAt,
      term,
      termSource,
      exited: exit ? at(exit.time) : terminated ? at(terminated.receivedAt.wall) : null,
      exitCode: exitState?.exitCode ?? (typeof exit?.fields.code === 'number' ? exit.fields.code : null),
      killed: exitState?.exitCode === 137,
      endpointNotReady,
      endpointGone,
      gone: at(deleted?.receivedAt.wall),
      preStop: describeLifecycle(containers[0]?.lifecycle ?? null),
      preStopSleepSeconds: sleep,
      grace:
        live?.terminationGracePeriodSeconds ??
        o.target?.pods.find((p) => p.uid === uid)?.terminationGracePeriodSeconds ??
        o.target?.deployment.terminationGracePeriodSeconds ??
        null,
    };
  });
}
