// Why one request failed at the edge, from its own sources: the load's line (client side), the edge's
// access-log line with the same X-Termlab-Request (where the edge sent it and when), the EndpointSlice
// changes the watch saw, and the pod's deletion and TERM. Every time is seconds from one origin. A cause
// is named only when the times beside it show it; what could not be measured is said, and the request
// is left to verify's own causes (harness/verify/grade.ts) with that said.
import type { EdgeAccess } from './access-log.ts';

export const EDGE_CAUSES = {
  'edge-routed-to-removed-endpoint': 'the edge sent it to a pod whose endpoint the EndpointSlice had already dropped',
  'keepalive-closed-by-app': 'a kept-alive upstream connection closed by the app under it',
  'no-endpoint-at-edge': 'the edge had no endpoint to send it to',
} as const;
export type EdgeCause = keyof typeof EDGE_CAUSES;

/** The load's line for the failed request (contract C4), its times in seconds. */
export interface EdgeRequest {
  id: string;
  method: string;
  due: number | null;
  sent: number;
  ended: number;
  status: number | null;
  /** The first bytes of a non-2xx answer. */
  body: string | null;
  /** Whether the load reused its connection to the edge (not the edge's to the pod: no log shows that). */
  reused: boolean | null;
}

export interface EdgePod {
  name: string;
  /** Pod IP; matched against the access line's upstream address. */
  ip: string | null;
  /** The port it listens on, when pods share an IP (the simulated cluster's pods all have 127.0.0.1). */
  port?: number | null;
  /** The key its slice changes carry (its UID); absent: its IP. */
  endpoint?: string;
  deletion: number | null;
  term: number | null;
  exited: number | null;
  /** The app's own idle keep-alive timeout in seconds, when known (the lab's LAB_KEEPALIVE_TIMEOUT_MS). */
  keepAliveTimeoutSeconds: number | null;
}

/** One endpoint's state in one EndpointSlice change the watch saw. */
export interface SliceChange {
  at: number;
  /** The endpoint: its pod's UID where the slice names it, else its address. */
  ip: string;
  /** Absent from the slice (removed, or the slice deleted). */
  gone: boolean;
  ready: boolean | null;
}

export interface EdgeEvidence {
  /** The edge's line for this request, null when none was found. */
  access: EdgeAccess | null;
  /** Times are converted by the caller; the access line's start and end in seconds from the origin. */
  accessAt: { start: number; end: number } | null;
  /** False when the edge's log could not be read at all (an edge termlab cannot read, --url). */
  accessLogRead: boolean;
  /** Whether any of the edge's lines carries a request id: none does when the load sent no X-Termlab-Request. */
  idsKept?: boolean;
  pods: EdgePod[];
  slice: SliceChange[];
  /** The edge's upstream idle timeout in seconds (Traefik's default 90). */
  edgeIdleTimeoutSeconds: number;
}

export interface EdgeAttribution {
  /** Null: the edge's evidence does not decide it; verify's own causes apply. */
  cause: EdgeCause | null;
  pod: string | null;
  /** The evidence, with its times. */
  why: string;
  /** For the edge's lag: how long after the EndpointSlice dropped the pod the edge still sent to it. */
  lagSeconds: number | null;
  /** What could not be measured for this request. */
  unmeasured: string[];
}

/** Times closer than this are one moment (every time is shown to 0.1 s; sources are separate clocks). */
export const EDGE_SAME_MOMENT_SECONDS = 0.05;

// To 10 ms: two times a moment apart (EDGE_SAME_MOMENT_SECONDS) must not print as a tenth apart.
const fmt = (s: number) => `${s.toFixed(2)}s`;
/** `IP:port` (or `[v6]:port`) as its IP and port. */
export function splitAddress(addr: string): { ip: string; port: number | null } {
  const m = /^\[(.*)\](?::(\d+))?$/.exec(addr) ?? /^([^:]*)(?::(\d+))?$/.exec(addr);
  return m ? { ip: m[1]!, port: m[2] ? Number(m[2]) : null } : { ip: addr, port: null };
}

/** The pod an upstream address names: by IP, and by port too where it says one. */
export function podAt<P extends Pick<EdgePod, 'ip' | 'port'>>(pods: P[], addr: string): P | null {
  const { ip, port } = splitAddress(addr);
  return pods.find((p) => p.ip === ip && (p.port == null || port === null || p.port === port)) ?? null;
}
/** The bodies Traefik answers its own proxy errors with (http.StatusText, no newline). */
const EDGE_ERROR_BODY: Record<number, string> = { 502: 'Bad Gateway', 504: 'Gateway Timeout' };

/**
 * Whether the edge's line is Traefik's own proxy error (502 Bad Gateway, 504 Gateway Timeout): its access log gives
 * that as OriginStatus too, and the body, Go's status text, tells it from an app that answered the same code itself.
 */
export const isEdgeOwnError = (a: Pick<EdgeAccess, 'status' | 'originStatus'>, body: string | null): boolean =>
  (a.status === 502 || a.status === 504) &&
  (a.originStatus === null || a.originStatus === a.status) &&
  (body === null || body.trim() === EDGE_ERROR_BODY[a.status]);

/** Methods Go's http.Transport replays on a fresh connection when a reused one fails before any answer byte. */
export const REPLAYED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * When the slice dropped this endpoint for good: its first change to not ready or gone, after having been ready,
 * that no ready came after (a readiness blip it recovered from is not its removal); null if never.
 */
export function removedAt(slice: SliceChange[], ip: string): number | null {
  let wasReady = false;
  let removed: number | null = null;
  for (const c of [...slice].sort((a, b) => a.at - b.at)) {
    if (c.ip !== ip) continue;
    if (!c.gone && c.ready !== false) {
      wasReady = true;
      removed = null;
    } else if (wasReady && removed === null) removed = c.at;
  }
  return removed;
}

/** How many endpoints the slice showed ready at a moment (by the last change of each IP at or before it). */
export function readyAt(slice: SliceChange[], t: number): number {
  const last = new Map<string, SliceChange>();
  for (const c of [...slice].sort((a, b) => a.at - b.at)) if (c.at <= t) last.set(c.ip, c);
  return [...last.values()].filter((c) => !c.gone && c.ready !== false).length;
}

const defer = (why: string, unmeasured: string[], pod: string | null = null): EdgeAttribution => ({
  cause: null,
  pod,
  why,
  lagSeconds: null,
  unmeasured,
});

export function attributeAtEdge(r: EdgeRequest, e: EdgeEvidence): EdgeAttribution {
  const slack = EDGE_SAME_MOMENT_SECONDS;
  if (!e.accessLogRead)
    return defer('the edge could not be read: causes from the client side and the pods only', [
      "the edge's access log (which pod it sent this to, and when)",
    ]);
  if (e.idsKept === false)
    return defer("the edge's lines carry no X-Termlab-Request: which of them is this request's cannot be told", [
      "the edge's line for this request (the load sent no request id, or the edge drops the header)",
    ]);
  if (!e.access || !e.accessAt)
    return defer(
      `the edge logged no request ${r.id}: it failed before the edge had it (between the load and the edge)`,
      [],
    );
  const a = e.access;
  const at = e.accessAt.start;
  const upstream = a.upstream ? splitAddress(a.upstream).ip : null;
  const answered = a.originStatus !== null && !isEdgeOwnError(a, r.body);

  // No server picked and a 503 from the edge itself (Gateway: "no available server"), or a 404 with no router
  // (the Ingress provider drops the router of a Service with no serving endpoint): nothing to send it to.
  if (!upstream && !answered && (a.status === 503 || (a.status === 404 && !a.router))) {
    const ready = readyAt(e.slice, at);
    return {
      cause: 'no-endpoint-at-edge',
      pod: null,
      why:
        ready === 0
          ? `the edge answered ${a.status} at ${fmt(at)} with no server picked; the EndpointSlice had no ready endpoint then`
          : `the edge answered ${a.status} at ${fmt(at)} with no server picked, while the EndpointSlice listed ${ready} ready: the edge had not yet learned them`,
      lagSeconds: null,
      unmeasured: [],
    };
  }
  if (!upstream)
    return defer(`the edge answered ${a.status} at ${fmt(at)} without naming an upstream`, [
      'which pod the edge sent it to',
    ]);
  const pod = podAt(e.pods, a.upstream!);
  const name = pod?.name ?? a.upstream!;
  const removed = removedAt(e.slice, pod?.endpoint ?? upstream);
  // The edge's lag: it picked a pod the EndpointSlice had already dropped.
  if (removed !== null && at >= removed + slack) {
    const lag = at - removed;
    return {
      cause: 'edge-routed-to-removed-endpoint',
      pod: pod?.name ?? null,
      why: `the edge sent it to ${name} at ${fmt(at)}, ${fmt(lag)} after the EndpointSlice dropped that endpoint (${fmt(removed)}); it answered ${a.status}${answered ? ` (the pod said ${a.originStatus})` : ' (nothing from the pod)'}`,
      lagSeconds: lag,
      unmeasured: [],
    };
  }
  // A 502 the pod never answered, on a pod whose endpoint was still listed: the app closed the connection under it.
  if (a.status === 502 && !answered) {
    const replay = REPLAYED_METHODS.has(a.method.toUpperCase())
      ? `a ${a.method}, which the edge's transport replays once on a new connection: that failed too`
      : `a ${a.method}, which the edge's transport does not replay`;
    if (pod?.term != null && at >= pod.term - slack && (pod.exited === null || at <= pod.exited + slack))
      return {
        cause: 'keepalive-closed-by-app',
        pod: pod.name,
        why: `the edge sent it to ${pod.name} at ${fmt(at)}, ${fmt(Math.max(0, at - pod.term))} after its TERM (${fmt(pod.term)}), while the EndpointSlice still listed it${removed !== null ? ` (dropped at ${fmt(removed)})` : ''}; 502 with nothing from the pod: the app closed under the edge at TERM (a kept-alive connection, or its listener if the edge dialled anew); ${replay}`,
        lagSeconds: null,
        unmeasured: [
          "whether the edge reused a kept-alive connection or dialled a new one (Traefik's access log does not say)",
        ],
      };
    if (pod && pod.keepAliveTimeoutSeconds !== null && pod.keepAliveTimeoutSeconds < e.edgeIdleTimeoutSeconds)
      return {
        cause: 'keepalive-closed-by-app',
        pod: pod.name,
        why: `the edge sent it to ${pod.name} at ${fmt(at)}${pod.term !== null ? `, before its TERM (${fmt(pod.term)})` : ''}, and got nothing back (502); the app closes connections idle ${pod.keepAliveTimeoutSeconds}s, sooner than the edge's ${e.edgeIdleTimeoutSeconds}s: ${replay}`,
        lagSeconds: null,
        unmeasured: ['how long the edge had kept that connection idle (no log shows it)'],
      };
    if (pod?.exited != null && at > pod.exited + slack)
      return defer(
        `the edge sent it to ${pod.name} at ${fmt(at)}, after the app exited (${fmt(pod.exited)}), while the EndpointSlice still listed it`,
        [],
        pod.name,
      );
    return defer(
      `the edge sent it to ${name} at ${fmt(at)} and got nothing back (502), with no TERM or keep-alive timeout to explain it`,
      pod ? ["the app's keep-alive timeout"] : [`which pod had ${upstream}`],
      pod?.name ?? null,
    );
  }
  return defer(
    `the edge sent it to ${name} at ${fmt(at)}${removed === null ? '' : at < removed - slack ? `, before the EndpointSlice dropped it (${fmt(removed)})` : `, as the EndpointSlice dropped it (${fmt(removed)}, the same moment)`} and answered ${a.status}${answered ? ` (the pod said ${a.originStatus})` : ''}`,
    [],
    pod?.name ?? null,
  );
}
