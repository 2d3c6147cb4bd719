// The edge's share of a verification's grade: each failed request's cause at the edge (harness/edge/
// attribute.ts) from the edge's access log, the EndpointSlice and the pods, the edge's lag measured from
// every removal (all requests, not only the failed ones), and advice that follows from those figures.
// Pure, offline, from the file alone; null when the load did not go through an edge.
import { parseLogLineJson } from '../observation/timeline.ts';
import type { VerificationObservation } from '../observation/verification.ts';
import { parseLabLogLines } from '../grade/sources.ts';
import { type AccessLog, type EdgeAccess, parseAccessLog } from '../edge/access-log.ts';
import {
  attributeAtEdge,
  EDGE_SAME_MOMENT_SECONDS,
  type EdgeCause,
  type EdgePod,
  podAt,
  removedAt,
  type SliceChange,
} from '../edge/attribute.ts';
import { edgePicture } from '../grade/edge/picture.ts';
import type { LoadRecord } from '../grade/rollout/records.ts';
import type { EdgePicture } from '../grade/types.ts';
import { deletedByTheAct, type PodTimes } from './facts.ts';
import { fmt, p99, round1 } from './figures.ts';

/** Traefik's servers transport default (forwardingTimeouts.idleConnTimeout), v3.7.13. */
export const EDGE_IDLE_TIMEOUT_SECONDS = 90;
/** Added to the longest lag a run measured before it becomes a preStop sleep: one run is not the worst. */
const EDGE_SLEEP_MARGIN_SECONDS = 1;

export interface EdgeFinding {
  id: string;
  cause: EdgeCause | null;
  pod: string | null;
  why: string;
  lagSeconds: number | null;
  unmeasured: string[];
}

export interface EdgeGrade {
  via: string | null;
  url: string | null;
  /** The edge's access log was read (false: --url, or no edge pod's log). */
  readable: boolean;
  byCause: Record<EdgeCause, number>;
  /** Failed requests the edge's evidence did not decide: verify's own causes stand for them. */
  undecided: number;
  findings: EdgeFinding[];
  /** Per removed endpoint: how long after the EndpointSlice dropped it the edge still sent it requests. */
  lags: { pod: string; removed: number; lastSent: number; lag: number; deletion: number | null }[];
  /** One request the edge sent to a dropped endpoint, each moment from its own source (the lab report's picture). */
  picture: EdgePicture | null;
  advice: string[];
  reasoning: string[];
  problems: string[];
}

/**
 * Each endpoint's state in each slice change, keyed by its pod's UID (else its address: pods may share one,
 * as on the simulated cluster), and "gone" for one a slice no longer lists.
 */
export function sliceChanges(o: VerificationObservation, at: (wall: string) => number): SliceChange[] {
  const out: SliceChange[] = [];
  const listed = new Map<string, Set<string>>();
  for (const s of o.evidence.sliceEvents) {
    const t = at(s.receivedAt.wall);
    const now = new Set<string>();
    if (s.type !== 'DELETED')
      for (const ep of s.endpoints)
        for (const key of ep.podUid ? [ep.podUid] : ep.addresses) {
          now.add(key);
          out.push({ at: t, ip: key, gone: false, ready: ep.ready });
        }
    for (const key of listed.get(s.name) ?? [])
      if (!now.has(key)) out.push({ at: t, ip: key, gone: true, ready: null });
    listed.set(s.name, now);
  }
  return out;
}

/** Pod IPs as the EndpointSlice listed them (the edge names upstreams by address). */
function ipsOf(o: VerificationObservation): Map<string, string> {
  const m = new Map<string, string>();
  for (const s of o.evidence.sliceEvents)
    for (const ep of s.endpoints) if (ep.podUid) for (const ip of ep.addresses) m.set(ep.podUid, ip);
  return m;
}

/** What the app's own log says of it (the lab image's listening line): its port and keep-alive timeout. */
function appSays(o: VerificationObservation, uid: string): { port: number | null; keepAlive: number | null } {
  const out = { port: null as number | null, keepAlive: null as number | null };
  const log = o.evidence.podLogs.find((l) => l.uid === uid);
  for (const l of log ? parseLabLogLines(log.lines).lines : []) {
    const f = l.fields as Record<string, unknown>;
    if (l.event === 'listening' && typeof f.port === 'number') out.port ??= f.port;
    if (typeof f.keepAliveTimeoutMs === 'number') out.keepAlive ??= f.keepAliveTimeoutMs / 1000;
  }
  return out;
}

/** The load's own line for each request (contract C4's fields beyond the record schema's). */
interface LoadExtra {
  requestId: string | null;
  method: string;
  status: number | null;
  body: string | null;
  reused: boolean | null;
}
function loadExtras(o: VerificationObservation): Map<string, LoadExtra> {
  const m = new Map<string, LoadExtra>();
  for (const l of o.evidence.loadLog?.lines ?? []) {
    const j = parseLogLineJson(l.text) as Record<string, unknown> | undefined;
    if (j?.event !== 'request' || typeof j.id !== 'string') continue;
    m.set(j.id, {
      requestId: typeof j.requestId === 'string' ? j.requestId : null,
      method: typeof j.method === 'string' ? j.method : (o.request.method ?? 'GET'),
      status: typeof j.status === 'number' ? j.status : null,
      body: typeof j.bodyHead === 'string' ? j.bodyHead : null,
      reused: typeof j.reused === 'boolean' ? j.reused : null,
    });
  }
  return m;
}

/** The edge's line for a load line: by the id the load sent, else one whose id ends in the line's own id. */
function accessFinder(log: AccessLog): (id: string, requestId: string | null) => EdgeAccess | null {
  const exact = new Map<string, EdgeAccess>();
  const bySuffix = new Map<string, EdgeAccess>();
  for (const e of log.entries) {
    if (e.requestId && !exact.has(e.requestId)) exact.set(e.requestId, e);
    // The id's tail, else the path's `id` query (a load from before the header; the real node's first run).
    const tail = (e.requestId && /(?:^|[^A-Za-z0-9])(L\d+)$/.exec(e.requestId)?.[1]) || e.pathId;
    if (tail && !bySuffix.has(tail)) bySuffix.set(tail, e);
  }
  return (id, requestId) => (requestId ? exact.get(requestId) : null) ?? exact.get(id) ?? bySuffix.get(id) ?? null;
}

export function gradeEdge(
  o: VerificationObservation,
  failed: { id: string; sent: number; ended: number; due: number | null; record: LoadRecord }[],
  pods: PodTimes[],
  origin: number,
): EdgeGrade | null {
  const edge = o.edge;
  if (!edge) return null;
  const at = (wall: string) => (Date.parse(wall) - origin) / 1000;
  const logs = o.evidence.edgeLogs ?? [];
  const readable = edge.url === null && logs.length > 0;
  const log = parseAccessLog(logs.flatMap((l) => l.lines));
  const problems = log.malformed.slice(0, 1).map((m) => m.problem);
  const slice = sliceChanges(o, at);
  const ips = ipsOf(o);
  const edgePods: EdgePod[] = pods.map((p) => {
    const says = appSays(o, p.uid);
    return {
      name: p.name,
      ip: ips.get(p.uid) ?? null,
      // Only where pods share an IP does the port tell them apart; the app's own port is not the Service's.
      // A pod sharing its IP whose port is unknown matches no line (-1), rather than any line to that IP.
      port: [...ips.values()].filter((ip) => ip === ips.get(p.uid)).length > 1 ? (says.port ?? -1) : null,
      endpoint: p.uid,
      deletion: p.deletion,
      term: p.term,
      exited: p.exited,
      keepAliveTimeoutSeconds: says.keepAlive,
    };
  });
  const extras = loadExtras(o);
  const idsKept = log.entries.some((e) => e.requestId !== null || e.pathId !== null);
  const find = accessFinder(log);
  const accessOf = new Map<string, EdgeAccess | null>();
  const findings: EdgeFinding[] = failed.map((r) => {
    const x = extras.get(r.id);
    const access = readable ? find(r.id, x?.requestId ?? null) : null;
    accessOf.set(r.id, access);
    const a = attributeAtEdge(
      {
        id: r.id,
        method: x?.method ?? o.request.method ?? 'GET',
        due: r.due,
        sent: r.sent,
        ended: r.ended,
        status: x?.status ?? null,
        body: x?.body ?? null,
        reused: x?.reused ?? null,
      },
      {
        access,
        accessAt: access ? { start: (access.startMs - origin) / 1000, end: (access.endMs - origin) / 1000 } : null,
        accessLogRead: readable,
        idsKept,
        pods: edgePods,
        slice,
        edgeIdleTimeoutSeconds: EDGE_IDLE_TIMEOUT_SECONDS,
      },
    );
    return { id: r.id, ...a };
  });
  const byCause: Record<EdgeCause, number> = {
    'edge-routed-to-removed-endpoint': 0,
    'keepalive-closed-by-app': 0,
    'no-endpoint-at-edge': 0,
  };
  for (const f of findings) if (f.cause) byCause[f.cause]++;

  // The edge's lag from every removal: its last request to each removed endpoint, failed or not.
  const lags: EdgeGrade['lags'] = [];
  if (readable)
    for (const p of edgePods) {
      if (!p.ip) continue;
      const removed = removedAt(slice, p.endpoint!);
      if (removed === null) continue;
      const sentTo = log.entries
        .filter((e) => e.upstream && podAt(edgePods, e.upstream) === p)
        .map((e) => (e.startMs - origin) / 1000);
      if (!sentTo.length) continue;
      const lastSent = Math.max(...sentTo);
      lags.push({ pod: p.name, removed, lastSent, lag: Math.max(0, lastSent - removed), deletion: p.deletion });
    }
  const { advice, reasoning } = edgeAdvice(o, findings, lags, edgePods, pods, readable);
  const picture = readable
    ? edgePicture(
        failed.map((r, i) => ({
          record: r.record,
          cause: findings[i]!.cause ?? 'undecided',
          access: accessOf.get(r.id) ?? null,
          pod: findings[i]!.pod,
        })),
        log,
        { pods: edgePods, slice },
        origin,
      )
    : null;
  return {
    via: edge.via,
    url: edge.url,
    readable,
    byCause,
    undecided: findings.filter((f) => f.cause === null).length,
    findings,
    lags,
    picture,
    advice,
    reasoning,
    problems,
  };
}

function edgeAdvice(
  o: VerificationObservation,
  findings: EdgeFinding[],
  lags: EdgeGrade['lags'],
  edgePods: EdgePod[],
  pods: PodTimes[],
  readable: boolean,
): { advice: string[]; reasoning: string[] } {
  const advice: string[] = [];
  const reasoning: string[] = [];
  if (!readable) {
    reasoning.push(
      o.edge?.url
        ? `the edge at ${o.edge.url} was not read (--url): which pod each request went to, and the edge's lag behind the EndpointSlice, were not measured; causes come from the client side and the pods`
        : `no edge pod's log was read: which pod each request went to, and the edge's lag, were not measured`,
    );
    return { advice, reasoning };
  }
  if (lags.length) {
    const values = lags.map((l) => l.lag);
    reasoning.push(
      `the edge went on sending to a removed endpoint up to ${fmt(Math.max(...values))} after the EndpointSlice dropped it (p99 ${fmt(p99(values))}, measured from ${lags.length} removal(s): ${lags.map((l) => `${l.pod} dropped at ${fmt(l.removed)}, last sent ${fmt(l.lastSent)}`).join('; ')})`,
    );
  }
  const lagged = findings.filter((f) => f.cause === 'edge-routed-to-removed-endpoint');
  const spansFromDeletion = lags.filter((l) => l.deletion !== null).map((l) => l.lastSent - l.deletion!);
  const sleeping = Math.min(...pods.filter(deletedByTheAct).map((p) => p.preStopSleepSeconds ?? 0));
  if (!findings.length && spansFromDeletion.length && sleeping > 0) {
    const span = Math.max(...spansFromDeletion);
    reasoning.push(
      span < sleeping
        ? `the preStop sleep (${sleeping}s) outlasted the edge's lag here by ${fmt(sleeping - span)}: its last request to a deleted pod came ${fmt(span)} after the deletion`
        : `the edge's last request to a deleted pod came ${fmt(span)} after the deletion, past the ${sleeping}s preStop sleep, yet none failed: the app still answered then`,
    );
  }
  // Without request ids no failure is matched to an edge line, but the lag itself is measured from every line.
  const noIds = findings.length > 0 && findings.every((f) => f.why.startsWith("the edge's lines carry no"));
  const lateSends = lags.filter((l) => l.lag > EDGE_SAME_MOMENT_SECONDS);
  if (lagged.length || (noIds && lateSends.length)) {
    // The sleep runs from the deletion: it must cover the slice's removal and the edge's lag after it.
    const y = round1(Math.max(0, ...spansFromDeletion, ...lagged.map((f) => f.lagSeconds ?? 0)));
    const x = Math.ceil(y + EDGE_SLEEP_MARGIN_SECONDS);
    const current = Math.max(0, ...pods.filter(deletedByTheAct).map((p) => p.preStopSleepSeconds ?? 0));
    const derived = `${fmt(y)} (the edge's last request to a deleted pod, from its deletion) + a ${EDGE_SLEEP_MARGIN_SECONDS}s margin, rounded up, is ${x}s`;
    reasoning.push(
      lagged.length
        ? `${lagged.length} failed request(s) were sent by the edge to a pod the EndpointSlice had already dropped (lag p99 ${fmt(p99(lagged.map((f) => f.lagSeconds ?? 0)))})`
        : `the edge's lines carry no request ids (the load sent none), so no failure is matched to one; but the edge sent requests to ${lateSends.length} endpoint(s) after the EndpointSlice had dropped them`,
    );
    advice.push(
      current >= x
        ? `the preStop sleep (${current}s) already outlasts the edge's lag measured here (${derived}), yet the edge sent to removed endpoints inside it: look at the edge's load or its provider's throttle, not the sleep`
        : `${current ? `lengthen the preStop sleep from ${current}s to at least` : 'add `preStop: sleep` of at least'} ${x}s — preStop sleep ≥ the edge's lag: ${derived}`,
    );
  }
  const raced = findings.filter((f) => f.cause === 'keepalive-closed-by-app');
  const atTerm = raced.filter((f) => f.why.includes('after its TERM'));
  if (atTerm.length) {
    reasoning.push(
      `${atTerm.length} request(s) got 502 with nothing from the pod, sent by the edge after the pod's TERM while its endpoint was still listed (on a kept-alive connection the app closed, or a new one its closed listener refused: the access log does not say which)`,
    );
    advice.push(
      'send `Connection: close` after TERM, and close a kept-alive connection only once no request is on it (finish in-flight ones, then close): an app that closes idle connections at TERM races the edge reusing them; and keep accepting until the edge stops routing to the pod (the preStop sleep)',
    );
  }
  const idle = raced.filter((f) => !f.why.includes('after its TERM'));
  if (idle.length) {
    const ka = Math.min(...edgePods.map((p) => p.keepAliveTimeoutSeconds ?? Infinity));
    reasoning.push(
      `${idle.length} request(s) got 502 with nothing from a pod that was not terminating; the app closes connections idle ${ka}s, the edge keeps them ${EDGE_IDLE_TIMEOUT_SECONDS}s`,
    );
    advice.push(
      `the edge's upstream idle timeout (${EDGE_IDLE_TIMEOUT_SECONDS}s) must be shorter than the app's keep-alive timeout (${ka}s here): raise the app's keep-alive timeout above ${EDGE_IDLE_TIMEOUT_SECONDS}s, or lower the edge's serversTransport idleConnTimeout below ${ka}s`,
    );
  }
  const none = findings.filter((f) => f.cause === 'no-endpoint-at-edge');
  if (none.length)
    advice.push(
      `${none.length} request(s) got 503 from the edge with no endpoint to send to: keep ready replicas through the change (maxUnavailable: 0, a readiness probe that holds until the app serves)`,
    );
  const undecided = findings.filter((f) => f.cause === null && f.unmeasured.length);
  if (undecided.length)
    reasoning.push(
      `${undecided.length} failed request(s) were not decided at the edge: ${[...new Set(undecided.flatMap((f) => f.unmeasured))].join('; ')} could not be measured`,
    );
  return { advice, reasoning };
}
