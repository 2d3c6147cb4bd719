// The edge's pods' logs (Traefik's access log among its general lines), followed through the
// pods/log API from the moment the watches start, and kept for the run's window only: the edge
// serves other traffic and has run long before this verification.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Cluster, listPods } from '../kube/index.ts';
import type { RunClock } from '../run/clock.ts';
import { LogFollower } from '../run/logs.ts';
import type { PodLog } from '../observation/rollout.ts';
import { EDGE_LABEL } from '../edge/find.ts';
import { parseAccessLine } from '../edge/access-log.ts';
import { needing } from './kube.ts';

/** Lines this long before the watches began are kept too: the edge's clock and the harness's differ a little. */
const WINDOW_SLACK_MS = 1000;
/** How far back the edge's log is asked for (whole seconds on the API's side). */
const SINCE_MARGIN_MS = 5000;
/**
 * Traefik's dial timeout (`forwardingTimeouts.dialTimeout`, 30 s): a request sent to a deleted pod's vanished
 * address ends, and is logged, only then. A POST's client leaving earlier does not end it: Go's server notices
 * a closed client only once the request body is read, and the proxy reads it after the dial (on the node,
 * 2026-12-07: the POSTs the load gave up on at 10 s were logged 504 at 30.0 s, after verify had stopped reading).
 */
export const EDGE_DIAL_TIMEOUT_MS = 30_000;
/** Past the dial timeout, for the line to be written and reach the log stream. */
const LATE_LINE_MARGIN_MS = 2_000;
/** How often the lines are looked at while waiting. */
const LOOK_EVERY_MS = 250;

/** A request the load saw fail: its id and header id, and when it was sent (the load's clock, ms). */
export interface FailedSend {
  id: string;
  requestId: string | null;
  sentMs: number;
}

export class EdgeLogs {
  private readonly followers: { pod: string; uid: string; follower: LogFollower }[] = [];

  async start(cluster: Cluster, namespace: string, clock: RunClock, signal: AbortSignal): Promise<void> {
    const pods = await needing('list', 'pods', namespace, () =>
      listPods(cluster, namespace, { labelSelector: EDGE_LABEL }),
    );
    for (const p of pods.items) {
      if (signal.aborted || p.status?.phase !== 'Running') continue;
      const follower = new LogFollower();
      this.followers.push({ pod: p.metadata!.name!, uid: p.metadata!.uid!, follower });
      // From a few seconds back, not the edge's whole life: it has served other traffic long before this run.
      const since = new Date(Date.now() - SINCE_MARGIN_MS).toISOString().replace(/\.\d+Z$/, 'Z');
      await follower.start(
        cluster,
        namespace,
        p.metadata!.name!,
        p.spec?.containers?.[0]?.name ?? 'traefik',
        clock,
        since,
      );
    }
  }

  stop(): void {
    for (const { follower } of this.followers) if (!follower.ended) follower.stop();
  }

  /** The failed requests the edge has not logged yet (by the load's header id, else the path's id). */
  unlogged(failed: FailedSend[]): FailedSend[] {
    const seen = new Set<string>();
    for (const { follower } of this.followers)
      for (const l of follower.lines) {
        const access = parseAccessLine(l.text);
        if (!access || !('startMs' in access)) continue;
        if (access.requestId) seen.add(access.requestId);
        if (access.pathId) seen.add(access.pathId);
      }
    return failed.filter((f) => !(f.requestId && seen.has(f.requestId)) && !seen.has(f.id));
  }

  /**
   * Waits until the edge has logged every failed request, or until the last of them would have been logged at
   * the dial timeout: the lines of requests still being dialled when the load ended. Returns those still missing.
   */
  async awaitLines(failed: FailedSend[], signal: AbortSignal, now: () => number = Date.now): Promise<FailedSend[]> {
    let missing = this.unlogged(failed);
    if (!missing.length) return missing;
    // The sends are the load pod's clock, the wait this machine's (a laptop's may be off): never past one timeout from now.
    const longest = EDGE_DIAL_TIMEOUT_MS + LATE_LINE_MARGIN_MS;
    const until = Math.min(now() + longest, Math.max(...missing.map((f) => f.sentMs)) + longest);
    while (missing.length && now() < until && !signal.aborted) {
      await sleep(Math.min(LOOK_EVERY_MS, until - now()), undefined, { signal }).catch(() => {});
      missing = this.unlogged(missing);
    }
    return missing;
  }

  /** Each edge pod's lines from `from` on (by the access line's own start, else the API's stamp). */
  logs(from: string | null): PodLog[] {
    const t0 = from ? Date.parse(from) - WINDOW_SLACK_MS : -Infinity;
    return this.followers.map(({ pod, uid, follower }) => ({
      pod,
      uid,
      lines: follower.lines.filter((l) => {
        const access = parseAccessLine(l.text);
        if (access && 'startMs' in access) return access.startMs >= t0;
        return l.apiTime === null || Date.parse(l.apiTime) >= t0;
      }),
      ended: follower.ended && follower.error === null,
      error: follower.error,
    }));
  }
}
