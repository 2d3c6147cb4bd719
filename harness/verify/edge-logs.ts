// The edge's pods' logs (Traefik's access log among its general lines), followed through the
// pods/log API from the moment the watches start, and kept for the run's window only: the edge
// serves other traffic and has run long before this verification.
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
