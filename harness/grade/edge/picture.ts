// The one failed request the report draws through the edge (issue 42): the first, in the edge's own order, that
// failed to the edge's lag, with each moment from its own source — the pod watch (deletion), the EndpointSlice
// watch (endpoint dropped), the edge's access line (routed, DownstreamStatus), the pod's log (TERM), the load's
// line (sent, ended, status, body) — and the lag as the edge showed it for that pod: from the drop to the last
// request the edge still sent there. Times as the attribution reads them, then counted from the deletion.
import type { AccessLog, EdgeAccess } from '../../edge/access-log.ts';
import { type EdgeEvidence, isEdgeOwnError, podAt, removedAt } from '../../edge/attribute.ts';
import type { LoadRecord } from '../rollout/records.ts';
import type { EdgePicture } from '../types.ts';

/** What the picture needs of each failure (grade.ts's EdgeFailure). */
interface Failure {
  record: LoadRecord;
  cause: string;
  access?: EdgeAccess | null;
  pod?: string | null;
}

export function edgePicture(
  failures: Failure[],
  log: AccessLog,
  sources: Pick<EdgeEvidence, 'pods' | 'slice'>,
  wall0: number,
): EdgePicture | null {
  const at = (ms: number) => (ms - wall0) / 1000;
  const lagged = failures
    .filter((f) => f.cause === 'edge-routed-to-removed-endpoint' && f.access?.upstream && f.pod)
    .sort((a, b) => a.access!.startMs - b.access!.startMs);
  for (const f of lagged) {
    const a = f.access!;
    const pod = sources.pods.find((p) => p.name === f.pod);
    const dropped = pod ? removedAt(sources.slice, pod.endpoint ?? pod.ip ?? '') : null;
    if (!pod || pod.deletion === null || dropped === null) continue;
    // The last line the edge sent to this pod after the drop: where its lag, as seen, ends.
    const last = log.entries
      .filter((e) => e.upstream && podAt(sources.pods, e.upstream) === pod && at(e.startMs) >= dropped)
      .reduce((x, y) => (y.startMs > x.startMs ? y : x), a);
    const key = pod.endpoint ?? pod.ip;
    const drop = sources.slice.find((c) => c.ip === key && c.at === dropped);
    const zero = pod.deletion;
    const from = (t: number) => t - zero;
    const r = f.record;
    return {
      request: { id: r.id, method: a.method, path: a.path },
      pod: pod.name,
      upstream: a.upstream!,
      deletionAfterChange: zero,
      sliceDropped: from(dropped),
      dropped: drop && !drop.gone ? 'ready=false' : 'gone',
      routed: from(at(a.startMs)),
      term: pod.term === null ? null : from(pod.term),
      sent: from(at(Date.parse(r.sent.time))),
      ended: from(at(Date.parse(r.ended.time))),
      status: r.status ?? null,
      error: r.errorCode ?? null,
      body: r.bodyHead ?? null,
      edgeStatus: a.status,
      originStatus: a.originStatus,
      podAnswered: a.originStatus !== null && !isEdgeOwnError(a, r.bodyHead ?? null),
      lastRouted: from(at(last.startMs)),
      lastRequest: last.pathId ?? last.requestId,
    };
  }
  return null;
}
