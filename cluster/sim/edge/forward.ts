// The entry point's handler: route, pick a server, forward over a kept-alive upstream pool, and answer
// Traefik's errors. What the lesson depends on, with where Traefik and Go say it:
// - The pool: keep-alive, 200 idle connections per host (traefik cmd/configuration.go:30), an idle one
//   closed after 90 s (config/dynamic/http_config.go:578, IdleConnTimeout), the most recently used taken
//   first (Go's idle list and Node's 'lifo' alike); no response-header timeout (transport.go:320: 0).
// - Go's Transport replays a request whose reused connection failed before any response byte when it is
//   replayable (net/http transport.go shouldRetryRequest, request.go isReplayable: GET, HEAD, OPTIONS,
//   TRACE or an Idempotency-Key / X-Idempotency-Key header, and no body). The replay is silent: no retry
//   middleware runs by default, so the access log's RetryAttempts stays 0.
// - Otherwise the error becomes a status (proxy/httputil/proxy.go:233-250 ComputeStatusCode): a broken
//   connection 502, a timeout 504, the client gone 499; the body is the status text (proxy.go:196-212).
// - A pod whose sandbox is gone has no IP any more: on a node a dial to it gets no answer at all (no RST), so
//   Traefik waits out its dialTimeout (30 s) and answers 504 (node-edge measured it). The sim's pods share
//   127.0.0.1, where the closed port would refuse at once (502): the edge is told which servers are gone.
// - No server to pick: 503 "no available server\n" (loadbalancer/wrr/wrr.go:176, http.Error). No router:
//   Go's NotFoundHandler, 404 "404 page not found\n".
import { Agent, type ClientRequest, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type AccessRecord, logAccess } from './access-log.ts';
import type { Backend, Route, Server } from './routes.ts';

/** IdleConnTimeout (http_config.go:578): Node's Agent destroys a free socket at its timeout. */
export const IDLE_CONN_TIMEOUT_MS = 90_000;

/**
 * Traefik's servers transport pool. Go's Transport ignores a server's `Keep-Alive: timeout=N` hint; Node's Agent
 * would shorten the idle timeout to N - 1 s (keepSocketAlive), closing its idle connection before the app's own
 * idle close, and the kept-alive race of an app whose idle timeout is shorter than the edge's would never happen.
 */
export class GoTransportAgent extends Agent {
  override keepSocketAlive(socket: Socket): boolean {
    // The dialer's TCP keep-alive, 30 s (transport.go:301).
    socket.setKeepAlive(true, 30_000);
    socket.unref();
    if (socket.timeout !== IDLE_CONN_TIMEOUT_MS) socket.setTimeout(IDLE_CONN_TIMEOUT_MS);
    return true;
  }
}

export const upstreamAgent = new GoTransportAgent({
  keepAlive: true,
  maxFreeSockets: 200,
  timeout: IDLE_CONN_TIMEOUT_MS,
  scheduling: 'lifo',
});

/** Hop-by-hop headers (RFC 7230 6.1, httputil.ReverseProxy's hopHeaders): never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/** X-Forwarded-Server: the edge's host name (its pod's). */
const HOSTNAME = process.env.HOSTNAME ?? 'traefik';
const REPLAYABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
const STATUS_TEXT: Record<number, string> = {
  499: 'Client Closed Request',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

export interface Routing {
  routes: Route[];
  keptHeaders: string[];
  /** A server whose pod's address is gone (its sandbox torn down, or the pod deleted): a dial there hangs. */
  vanished?: (server: Server) => boolean;
  /** serversTransport.forwardingTimeouts.dialTimeout: how long a dial that gets no answer waits. */
  dialTimeoutMs?: number;
}

/** Traefik's dialTimeout default (config/static/static_config.go: DefaultDialTimeout). */
export const DIAL_TIMEOUT_MS = 30_000;

function hostMatches(hosts: string[], host: string): boolean {
  if (!hosts.length) return true;
  for (const h of hosts) {
    if (h === host) return true;
    if (h.startsWith('*.') && host.endsWith(h.slice(1))) return true;
  }
  return false;
}

/** Gateway API PathPrefix: whole path elements ("/a" matches "/a" and "/a/b", not "/ab"). */
function pathMatches(route: Route, path: string): boolean {
  if (route.pathType === 'Exact') return path === route.path;
  if (route.path === '/' || path === route.path) return true;
  const prefix = route.path.endsWith('/') ? route.path : `${route.path}/`;
  return path.startsWith(prefix);
}

export function findRoute(routes: Route[], host: string, path: string): Route | undefined {
  for (const r of routes) if (hostMatches(r.hosts, host) && pathMatches(r, path)) return r;
  return undefined;
}

/** Weighted round robin (wrr.go): equal weights take turns; weights repeat a backend in the cycle. */
function pickBackend(route: Route): Backend | undefined {
  const backends = route.backends;
  if (backends.length <= 1) return backends[0];
  let total = 0;
  for (const b of backends) total += b.weight;
  if (total <= 0) return undefined;
  let at = route.backendNext++ % total;
  for (const b of backends) {
    if (at < b.weight) return b;
    at -= b.weight;
  }
  return backends[0];
}

function pickServer(backend: Backend): Server | undefined {
  const servers = backend.servers;
  if (!servers.length) return undefined;
  return servers[backend.next++ % servers.length];
}

/** Go's http.Error: the message, a newline, text/plain and nosniff. */
function httpError(res: ServerResponse, status: number, message: string): number {
  const body = `${message}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
  return body.length;
}

/** What a failed round trip answers (ComputeStatusCode): a dial or read timeout 504, any other network error 502. */
function statusOf(error: NodeJS.ErrnoException): number {
  return error.code === 'ETIMEDOUT' ? 504 : 502;
}

export function handle(routing: Routing, req: IncomingMessage, res: ServerResponse): void {
  const startNs = process.hrtime.bigint();
  const record: AccessRecord = {
    startWallMs: performance.timeOrigin + performance.now(),
    startNs,
    clientAddr: req.socket.remoteAddress ?? '',
    clientPort: req.socket.remotePort ?? 0,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    host: req.headers.host ?? '',
    protocol: `HTTP/${req.httpVersion}`,
    requestSize: 0,
    originStatus: 0,
    originSize: 0,
    originNs: 0,
    downstreamStatus: 0,
    downstreamSize: 0,
    retryAttempts: 0,
    headers: [],
  };
  for (const name of routing.keptHeaders) {
    const value = req.headers[name.toLowerCase()];
    if (value !== undefined) record.headers.push([name, Array.isArray(value) ? value.join(',') : value]);
  }
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const q = record.path.indexOf('?');
  const route = findRoute(routing.routes, host, q === -1 ? record.path : record.path.slice(0, q));
  let logged = false;
  const done = (status: number, size: number) => {
    if (logged) return;
    logged = true;
    record.downstreamStatus = status;
    record.downstreamSize = size;
    logAccess(record);
  };
  if (!route) {
    req.resume();
    return done(404, httpError(res, 404, '404 page not found'));
  }
  record.routerName = route.routerName;
  record.ingress = route.ingress;
  const backend = pickBackend(route);
  if (backend?.status !== undefined) {
    req.resume();
    record.serviceName = backend.name;
    res.writeHead(backend.status, { 'content-length': 0 });
    res.end();
    return done(backend.status, 0);
  }
  const server = backend && pickServer(backend);
  if (!backend || !server) {
    req.resume();
    if (backend) record.serviceName = backend.name;
    return done(503, httpError(res, 503, 'no available server'));
  }
  record.serviceName = backend.name;
  record.serviceAddr = server.addr;
  record.serviceUrl = server.url;
  if (routing.vanished?.(server)) return dialNowhere(req, res, routing.dialTimeoutMs ?? DIAL_TIMEOUT_MS, record, done);
  forward(req, res, server, record, done);
}

/** A dial to an address nothing answers for: 504 "Gateway Timeout" at the dial timeout, or 499 if the client goes first. */
function dialNowhere(
  req: IncomingMessage,
  res: ServerResponse,
  timeoutMs: number,
  record: AccessRecord,
  done: (status: number, size: number) => void,
): void {
  const originStart = process.hrtime.bigint();
  req.resume();
  const end = (status: number) => {
    record.originStatus = status;
    record.originNs = Number(process.hrtime.bigint() - originStart);
    const text = STATUS_TEXT[status]!;
    if (status !== 499) {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': text.length });
      res.end(text);
    }
    done(status, text.length);
  };
  const timer = setTimeout(() => end(504), timeoutMs);
  res.once('close', () => {
    if (res.writableFinished) return;
    clearTimeout(timer);
    end(499);
  });
}

function forward(
  req: IncomingMessage,
  res: ServerResponse,
  server: Server,
  record: AccessRecord,
  done: (status: number, size: number) => void,
): void {
  // The request's headers as they came (a flat raw list: no per-request objects), but the hop-by-hop ones and a
  // client's X-Forwarded-*, which Traefik drops from an untrusted client (forwardedheaders) before setting its own.
  const raw = req.rawHeaders;
  const headers: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('x-forwarded-') || lower === 'x-real-ip') continue;
    headers.push(raw[i]!, raw[i + 1]!);
  }
  const clientIp = record.clientAddr.replace(/^::ffff:/, '');
  const host = req.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  headers.push(
    'X-Forwarded-For',
    clientIp,
    'X-Forwarded-Host',
    host,
    'X-Forwarded-Port',
    colon === -1 ? '80' : host.slice(colon + 1),
    'X-Forwarded-Proto',
    'http',
    'X-Forwarded-Server',
    HOSTNAME,
    'X-Real-Ip',
    clientIp,
  );
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  // ReverseProxy sends no body when the request has none (ContentLength 0): such a request is replayable.
  const bodyless = !chunked && (length === undefined || length === '0');
  if (chunked) headers.push('Transfer-Encoding', 'chunked');
  const replayable =
    bodyless &&
    (REPLAYABLE_METHODS.has(record.method) ||
      req.headers['idempotency-key'] !== undefined ||
      req.headers['x-idempotency-key'] !== undefined);
  const originStart = process.hrtime.bigint();
  let clientGone = false;
  let current: ClientRequest | null = null;
  // The client gone: the round trip's context is cancelled (ReverseProxy), the upstream request dropped: 499.
  res.once('close', () => {
    if (res.writableFinished) return;
    clientGone = true;
    current?.destroy();
  });

  const attempt = () => {
    const up = request({
      host: server.host,
      port: server.port,
      method: record.method,
      path: record.path,
      headers,
      agent: upstreamAgent,
      setHost: false,
    });
    current = up;
    let answered = false;
    up.on('response', (upRes) => {
      answered = true;
      const out: string[] = [];
      const rawOut = upRes.rawHeaders;
      for (let i = 0; i < rawOut.length; i += 2)
        if (!HOP_BY_HOP.has(rawOut[i]!.toLowerCase())) out.push(rawOut[i]!, rawOut[i + 1]!);
      const status = upRes.statusCode ?? 502;
      res.writeHead(status, out);
      let size = 0;
      upRes.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      upRes.pipe(res);
      upRes.on('end', () => {
        record.originStatus = status;
        record.originSize = size;
        record.originNs = Number(process.hrtime.bigint() - originStart);
        done(status, size);
      });
      upRes.on('error', () => {
        // Cut mid-body: the client's response is cut too (headers are gone already).
        res.destroy();
        record.originStatus = status;
        record.originNs = Number(process.hrtime.bigint() - originStart);
        done(status, size);
      });
    });
    up.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return;
      // Go's shouldRetryRequest: only on a reused connection, only a replayable request; no limit but the pool.
      if (up.reusedSocket && replayable && !clientGone) return attempt();
      const status = clientGone ? 499 : statusOf(error);
      record.originStatus = status;
      record.originNs = Number(process.hrtime.bigint() - originStart);
      const text = STATUS_TEXT[status]!;
      if (!clientGone) {
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': text.length });
        res.end(text);
      }
      done(status, text.length);
    });
    if (bodyless) {
      up.end();
      req.resume();
    } else {
      req.on('data', (c: Buffer) => {
        record.requestSize += c.length;
      });
      req.pipe(up);
    }
  };
  attempt();
}
