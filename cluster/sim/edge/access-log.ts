// Traefik's JSON access log (pkg/middlewares/accesslog): one logrus JSONFormatter line per request
// (logger.go:97), so the keys come sorted as Go's encoding/json sorts a map; durations in nanoseconds;
// headers dropped but the ones named "keep", logged as request_<Name>. Lines are written in batches
// once per event-loop turn: one write for many requests at 1,000 req/s.
import { writeSync } from 'node:fs';

export interface AccessRecord {
  startWallMs: number;
  startNs: bigint;
  clientAddr: string;
  clientPort: number;
  method: string;
  path: string;
  host: string;
  protocol: string;
  requestSize: number;
  routerName?: string;
  ingress?: { namespace: string; name: string; service: string; port: string };
  serviceName?: string;
  serviceAddr?: string;
  serviceUrl?: string;
  originStatus: number;
  originSize: number;
  originNs: number;
  downstreamStatus: number;
  downstreamSize: number;
  retryAttempts: number;
  headers: [string, string][];
}

let requestCount = 0;
let pending: string[] = [];
let scheduled = false;

/** RFC 3339 with Go's trailing-zero-free fraction (time.RFC3339Nano), microseconds from a wall-clock ms. */
export function rfc3339Nano(wallMs: number): string {
  const iso = new Date(Math.floor(wallMs)).toISOString();
  const micros = Math.round((wallMs % 1000) * 1000)
    .toString()
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${iso.slice(0, 19)}${micros ? `.${micros}` : ''}Z`;
}

function flush(): void {
  scheduled = false;
  const text = pending.join('');
  pending = [];
  try {
    writeSync(1, text);
  } catch {
    // stdout gone: the pod is going away.
  }
}

/** logrus's `time` has whole seconds: made once a second, not once a request. */
let timeSecond = -1;
let timeText = '';
function secondText(wallMs: number): string {
  const second = Math.floor(wallMs / 1000);
  if (second !== timeSecond) {
    timeSecond = second;
    timeText = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
  }
  return timeText;
}

/** Go's encoding/json sorts map keys byte-wise: upper case before lower case. */
export function accessLine(r: AccessRecord, nowWallMs: number, durationNs: number): string {
  const start = rfc3339Nano(r.startWallMs);
  const colon = r.host.lastIndexOf(':');
  const hasPort = colon !== -1 && colon > r.host.lastIndexOf(']');
  const fields: Record<string, unknown> = {
    ClientAddr: `${r.clientAddr}:${r.clientPort}`,
    ClientHost: r.clientAddr,
    ClientPort: String(r.clientPort),
    ClientUsername: '-',
    DownstreamContentSize: r.downstreamSize,
    DownstreamStatus: r.downstreamStatus,
    Duration: durationNs,
    // Set when the origin's size differs from what was sent and something was sent (logger.go:357-362): 0 for Traefik's own answers.
    GzipRatio:
      r.originSize !== r.downstreamSize && r.downstreamSize !== 0 ? r.originSize / r.downstreamSize : undefined,
    KubernetesIngressName: r.ingress?.name,
    KubernetesIngressNamespace: r.ingress?.namespace,
    KubernetesServiceName: r.ingress?.service,
    KubernetesServicePort: r.ingress?.port,
    OriginContentSize: r.originSize,
    OriginDuration: r.originNs,
    OriginStatus: r.originStatus,
    Overhead: durationNs - r.originNs,
    RequestAddr: r.host,
    RequestContentSize: r.requestSize,
    RequestCount: ++requestCount,
    RequestHost: hasPort ? r.host.slice(0, colon) : r.host,
    RequestMethod: r.method,
    RequestPath: r.path,
    RequestPort: hasPort ? r.host.slice(colon + 1) : '-',
    RequestProtocol: r.protocol,
    RequestScheme: 'http',
    RetryAttempts: r.retryAttempts,
    RouterName: r.routerName,
    ServiceAddr: r.serviceAddr,
    ServiceName: r.serviceName,
    ServiceURL: r.serviceUrl,
    StartLocal: start,
    StartUTC: start,
    entryPointName: 'web',
    level: 'info',
    msg: '',
  };
  // Written in sorted order already; the kept headers come sorted (flags.ts); undefined fields are left out.
  for (const [name, value] of r.headers) fields[`request_${name}`] = value;
  fields.time = secondText(nowWallMs);
  return `${JSON.stringify(fields)}\n`;
}

export function logAccess(r: AccessRecord): void {
  const durationNs = Number(process.hrtime.bigint() - r.startNs);
  pending.push(accessLine(r, Date.now(), durationNs));
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

const LEVEL_COLOUR = { INF: 32, WRN: 33, ERR: 31 } as const;

/**
 * Traefik's own log lines (--log.level=INFO, zerolog's console writer), interleaved with the access log: text with
 * ANSI colours, as node-edge saw on the node (`\x1b[90m<time>\x1b[0m \x1b[32mINF\x1b[0m <message>`).
 */
export function generalLog(level: keyof typeof LEVEL_COLOUR, message: string): void {
  const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  pending.push(`\x1b[90m${time}\x1b[0m \x1b[${LEVEL_COLOUR[level]}m${level}\x1b[0m ${message}\n`);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

export function flushLog(): void {
  if (pending.length) flush();
}
