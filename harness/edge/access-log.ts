// Traefik's JSON access log (--accesslog.format=json), one object a line on the traefik container's
// stdout, parsed through zod: the edge's own word on each request (when it started, where it sent it,
// what the upstream answered). Its general log lines (text, or JSON without access-log fields) share
// that stdout and are skipped; unknown fields are kept out of the way, not refused.
import { z } from 'zod';
import { formatIssue } from '../../lib/files.ts';

/** The header every load request carries (contract C4); Traefik logs a kept header as `request_<Name>`. */
export const REQUEST_ID_HEADER = 'X-Termlab-Request';
const REQUEST_ID_FIELD = `request_${REQUEST_ID_HEADER}`.toLowerCase();

/** Go's RFC 3339 with up to nanoseconds, as Traefik writes StartUTC. */
const Rfc3339 = z.string().refine((s) => Number.isFinite(wallMsOf(s)), 'expected an RFC 3339 time');

export const AccessLogLineSchema = z.looseObject({
  StartUTC: Rfc3339,
  /** Nanoseconds from the edge's receipt to its last byte out. */
  Duration: z.number().int().min(0),
  DownstreamStatus: z.number().int(),
  /** Absent or 0 when the upstream never answered (a dial error, a closed connection, no server). */
  OriginStatus: z.number().int().optional(),
  RequestMethod: z.string(),
  RequestPath: z.string(),
  RequestHost: z.string().optional(),
  ServiceAddr: z.string().optional(),
  ServiceURL: z.string().optional(),
  RouterName: z.string().optional(),
  RetryAttempts: z.number().int().min(0).optional(),
});

export interface EdgeAccess {
  /** 0-based line in the log it came from. */
  line: number;
  /** Wall time (ms since the epoch, sub-ms kept) the edge received it, and when it was done. */
  startMs: number;
  endMs: number;
  status: number;
  /** What the upstream answered; null when nothing came back from it. */
  originStatus: number | null;
  method: string;
  path: string;
  host: string | null;
  /** The upstream it was sent to, `IP:port` (ServiceAddr, else ServiceURL's host); null when none was picked. */
  upstream: string | null;
  router: string | null;
  retries: number;
  /** The load's request id (X-Termlab-Request), null when the header was not kept. */
  requestId: string | null;
  /** The `id` query the load adds to each path (`/work?ms=200&id=L374`): its id even from a load that sent no header. */
  pathId: string | null;
}

export interface AccessLog {
  entries: EdgeAccess[];
  /** Lines that claim to be access-log lines (they carry StartUTC or DownstreamStatus) but are broken. */
  malformed: { line: number; problem: string }[];
  /** General log lines (not access-log lines) passed over. */
  skipped: number;
}

/** Wall ms of an RFC 3339 time, keeping digits past the millisecond that Date.parse would drop. */
export function wallMsOf(s: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return Number.NaN;
  const whole = Date.parse(`${m[1]}${m[3]}`);
  const frac = m[2] ? Number(`0.${m[2]}`) * 1000 : 0;
  return whole + frac;
}

function upstreamOf(line: z.infer<typeof AccessLogLineSchema>): string | null {
  if (line.ServiceAddr) return line.ServiceAddr;
  if (!line.ServiceURL) return null;
  try {
    return new URL(line.ServiceURL).host || null;
  } catch {
    return null;
  }
}

/** Traefik canonicalises header names in its fields; the id is looked up case-insensitively all the same. */
function requestIdOf(json: Record<string, unknown>): string | null {
  for (const [k, v] of Object.entries(json))
    if (k.toLowerCase() === REQUEST_ID_FIELD && typeof v === 'string') return v;
  return null;
}

function pathIdOf(path: string): string | null {
  try {
    return new URL(path, 'http://edge').searchParams.get('id');
  } catch {
    return null;
  }
}

const claimsAccess = (json: Record<string, unknown>) => 'StartUTC' in json || 'DownstreamStatus' in json;

/** One line: an access entry, a broken access line (its problem), or null for anything else. */
export function parseAccessLine(text: string, line = 0): EdgeAccess | { problem: string } | null {
  const t = text.trim();
  if (!t.startsWith('{')) return null;
  let json: unknown;
  try {
    json = JSON.parse(t);
  } catch {
    return null;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return null;
  const obj = json as Record<string, unknown>;
  if (!claimsAccess(obj)) return null;
  const r = AccessLogLineSchema.safeParse(obj);
  if (!r.success) return { problem: `access-log line ${line + 1}: ${formatIssue(r.error.issues[0]!, '(line)')}` };
  const d = r.data;
  const startMs = wallMsOf(d.StartUTC);
  return {
    line,
    startMs,
    endMs: startMs + d.Duration / 1e6,
    status: d.DownstreamStatus,
    originStatus: d.OriginStatus ? d.OriginStatus : null,
    method: d.RequestMethod,
    path: d.RequestPath,
    host: d.RequestHost ?? null,
    upstream: upstreamOf(d),
    router: d.RouterName ?? null,
    retries: d.RetryAttempts ?? 0,
    requestId: requestIdOf(obj),
    pathId: pathIdOf(d.RequestPath),
  };
}

/** Every line of the traefik container's log (text, or pod-log lines as the observation keeps them). */
export function parseAccessLog(lines: readonly (string | { text: string })[]): AccessLog {
  const out: AccessLog = { entries: [], malformed: [], skipped: 0 };
  lines.forEach((l, i) => {
    const r = parseAccessLine(typeof l === 'string' ? l : l.text, i);
    if (r === null) out.skipped++;
    else if ('problem' in r) out.malformed.push({ line: i, problem: r.problem });
    else out.entries.push(r);
  });
  return out;
}

/** The edge's line for each request id (the first, should a client have re-sent an id). */
export function byRequestId(log: AccessLog): Map<string, EdgeAccess> {
  const m = new Map<string, EdgeAccess>();
  for (const e of log.entries) if (e.requestId && !m.has(e.requestId)) m.set(e.requestId, e);
  return m;
}
