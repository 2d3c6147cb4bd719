// The load generator: a mode of the lab server program (LAB_MODE=load), so it runs as a pod from
// the same image on any cluster. A steady rate of GET (or POST) /work through a bounded set of connections,
// one JSON line per request on stdout with this process's own clock.
//
// By default each request opens its own connection (`connection: close`): a Service routes each new
// connection at its own time (kube-proxy picks an endpoint per connection), which is what the
// rollout lab measures. A kept-alive connection stays pinned to one pod past its endpoint's
// removal (conntrack), a different lesson: LOAD_KEEPALIVE=1 keeps them, as browsers and services do
// through an edge (each line says whether its connection was `reused`). node:http, not undici: the
// image is node and these files alone (server/image.ts).
//
// The pool is this generator's own: a request due while `connections` are open waits here, unsent,
// and is sent (its `sent` stamped, its time limit started) when one ends. Queued inside an http
// Agent instead, a request's limit ran while it waited: on a starved machine the queue grew past
// the limit and requests that never left this process were recorded as timed out (ETIMEDOUT at
// connect), charged to the app. The wait shows as `sent` later than `dueMono`, and in `latencyMs`,
// which runs from the due time: a generator that falls behind cannot hide it (coordinated omission).
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { hostname } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { clockNow, type Clock, type EventSink, stdoutSink } from './events.ts';

export interface LoadConfig {
  target: string;
  rate: number;
  workMs: number;
  durationMs: number;
  connections: number;
  /** After the last send: how long requests still open may take before they are cut and recorded. */
  drainMs: number;
  /** `termlab verify`: the path (and query) to GET instead of the lab's /work; null for /work?ms=workMs. */
  path: string | null;
  /** The response header that names the answering pod (the lab's x-pod-uid). */
  podHeader: string;
  /** LOAD_KEEPALIVE=1: reuse connections (up to `connections`); otherwise one per request. */
  keepAlive: boolean;
  /** LOAD_METHOD: a POST carries a small body (the request an edge must not replay). */
  method: 'GET' | 'POST';
  /** LOAD_HOST: the Host header (a route's hostname); null: the target's. */
  host: string | null;
  /** Before each request's id in X-Termlab-Request: the pod's name (POD_NAME, else the host name and pid). */
  requestIdPrefix: string;
}

/** The header every request carries, unique per run: the edge's access log keeps it (request_X-Termlab-Request). */
export const LOAD_REQUEST_HEADER = 'x-termlab-request';
/** How much of a non-2xx answer's body a line keeps: enough for an edge's "Bad Gateway" or a JSON error. */
const BODY_HEAD_BYTES = 120;

export class LoadConfigError extends Error {
  readonly code = 'LOAD_CONFIG_INVALID';
}

const RATE_MAX = 10_000;
const CONNECTIONS_MAX = 1024;
const DURATION_MAX_MS = 30 * 60 * 1000;
const WORK_MAX_MS = 60_000;
/** Beyond the work itself, what a request may take before it is recorded as timed out. */
const DRAIN_MARGIN_MS = 10_000;
/** LOAD_CONNECTIONS' default: enough for `rate` requests each taking their work plus this, at least 32. */
const CONNECTIONS_MARGIN_MS = 1000;
const CONNECTIONS_MIN_DEFAULT = 32;

/** LOAD_CONNECTIONS when unset: sized from the rate asked for, so the pool never caps it (up to the cap). */
export function defaultLoadConnections(rate: number, workMs: number): number {
  return Math.min(
    CONNECTIONS_MAX,
    Math.max(CONNECTIONS_MIN_DEFAULT, Math.ceil((rate * (workMs + CONNECTIONS_MARGIN_MS)) / 1000)),
  );
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, min: number, max: number, fallback?: number): number {
  const raw = env[name];
  if ((raw === undefined || raw === '') && fallback !== undefined) return fallback;
  if (raw === undefined || !/^\d+$/.test(raw))
    throw new LoadConfigError(`${name}: expected a whole number ${min}-${max}, got ${JSON.stringify(raw ?? null)}`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new LoadConfigError(`${name}: expected a whole number ${min}-${max}, got ${value}`);
  return value;
}

function loadPath(path: string): string {
  if (!path.startsWith('/') || /[\s#]/.test(path))
    throw new LoadConfigError(
      `LOAD_PATH: expected a path such as /work?ms=200 (starting with /, no spaces or #), got ${JSON.stringify(path)}`,
    );
  return path;
}

export function parseLoadConfig(env: NodeJS.ProcessEnv): LoadConfig {
  const target = env.LOAD_TARGET ?? '';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new LoadConfigError(
      `LOAD_TARGET: expected a base URL such as http://10.96.0.10:80, got ${JSON.stringify(target)}`,
    );
  }
  if (url.protocol !== 'http:')
    throw new LoadConfigError(`LOAD_TARGET: only http:// is supported, got ${JSON.stringify(url.protocol)}`);
  const workMs = wholeNumber(env, 'LOAD_WORK_MS', 1, WORK_MAX_MS);
  const rate = wholeNumber(env, 'LOAD_RATE', 1, RATE_MAX);
  const keepAlive = env.LOAD_KEEPALIVE || '0';
  if (keepAlive !== '0' && keepAlive !== '1')
    throw new LoadConfigError(`LOAD_KEEPALIVE: expected 1 (reuse connections) or 0, got ${JSON.stringify(keepAlive)}`);
  const method = env.LOAD_METHOD || 'GET';
  if (method !== 'GET' && method !== 'POST')
    throw new LoadConfigError(`LOAD_METHOD: expected GET or POST, got ${JSON.stringify(method)}`);
  const host = env.LOAD_HOST || null;
  if (host !== null && !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host))
    throw new LoadConfigError(
      `LOAD_HOST: expected a host name such as web.example.com (optionally :port), got ${JSON.stringify(host)}`,
    );
  const prefix = env.POD_NAME || `${hostname()}-${process.pid}`;
  if (!/^[\x21-\x7e]{1,200}$/.test(prefix))
    throw new LoadConfigError(`POD_NAME: expected printable ASCII without spaces, got ${JSON.stringify(prefix)}`);
  return {
    target: target.replace(/\/+$/, ''),
    rate,
    workMs,
    durationMs: wholeNumber(env, 'LOAD_DURATION_MS', 1, DURATION_MAX_MS),
    connections: wholeNumber(env, 'LOAD_CONNECTIONS', 1, CONNECTIONS_MAX, defaultLoadConnections(rate, workMs)),
    drainMs: workMs + DRAIN_MARGIN_MS,
    path: env.LOAD_PATH ? loadPath(env.LOAD_PATH) : null,
    podHeader: (env.LOAD_POD_HEADER || 'x-pod-uid').toLowerCase(),
    keepAlive: keepAlive === '1',
    method,
    host,
    requestIdPrefix: prefix,
  };
}

/** One request as the load generator saw it; every time is this process's own clock. */
export interface LoadRecord {
  event: 'request';
  seq: number;
  id: string;
  /** Its X-Termlab-Request header: the prefix (the pod's name) and id, unique per run. */
  requestId: string;
  method: 'GET' | 'POST';
  /** When it was due by the steady rate (ms on this process's monotonic clock). */
  dueMono: number;
  /** When its connection was opened: later than dueMono by the tick's lag and any wait for a free connection. */
  sent: Clock;
  /** The socket connected: null when it never did (refused, reset before connecting). */
  connectedAt: Clock | null;
  headersAt: Clock | null;
  ended: Clock;
  /** From its due time to its end, ms: the wait for a free connection (or a late tick) included. */
  latencyMs: number;
  /** Sent on a kept-alive connection an earlier request had used (LOAD_KEEPALIVE=1); false on a new one. */
  reused: boolean;
  status: number | null;
  /** The first 120 bytes of a non-2xx answer's body (an edge's 502 page, the app's JSON); null otherwise. */
  bodyHead: string | null;
  /** The pod that answered (x-pod-uid); null without an answer. */
  podUid: string | null;
  outcome: 'completed' | 'rejected' | 'http-error' | 'cut' | 'failed';
  /** ECONNREFUSED, ECONNRESET, ETIMEDOUT, NO_DONE_LINE…; null when it completed. */
  errorCode: string | null;
  /** Where it failed: before a connection, before the answer's headers, or inside the body. */
  stage: 'connect' | 'request' | 'body' | null;
  bytes: number;
}

function errorCodeOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string' && e.code) return e.code;
  // node:http says "socket hang up" with ECONNRESET on the error; kept as a code either way.
  return typeof e.message === 'string' && /hang up/i.test(e.message) ? 'ECONNRESET' : 'UNKNOWN';
}

/** What the load-end line reports, counted as requests end (each record goes to the sink, none is kept). */
export interface LoadTally {
  sent: number;
  completed: number;
  rejected: number;
}

export interface LoadRun {
  tally: LoadTally;
  /** Resolves once every request has ended (sent all, then drained). */
  done: Promise<void>;
  /** Stop sending (SIGTERM): what is in flight still ends and is recorded. */
  stop(): void;
}

export function runLoad(config: LoadConfig, sink: EventSink = stdoutSink): LoadRun {
  // maxSockets is only a guard: the pool below never lets more than `connections` be in use. Kept alive,
  // the Agent hands the most recently freed socket first (lifo), as Go's Transport does.
  const agent = new Agent({
    keepAlive: config.keepAlive,
    maxSockets: config.connections,
    maxFreeSockets: config.connections,
    scheduling: 'lifo',
  });
  const write = (record: object) => sink(JSON.stringify(record) + '\n');
  /** Sockets that have carried a request: a request given one of them was sent on a reused connection. */
  const carried = new WeakSet<Socket>();
  const tally: LoadTally = { sent: 0, completed: 0, rejected: 0 };
  const startedMono = performance.now();
  const intervalMs = 1000 / config.rate;
  const total = Math.max(1, Math.floor((config.durationMs / 1000) * config.rate));
  const target = new URL(config.target);
  const path = config.path ?? `/work?ms=${config.workMs}`;
  const pathJoin = path.includes('?') ? '&' : '?';
  write({
    event: 'load-start',
    ...clockNow(),
    pid: process.pid,
    target: config.target,
    rate: config.rate,
    workMs: config.workMs,
    durationMs: config.durationMs,
    connections: config.connections,
    planned: total,
    keepAlive: config.keepAlive,
    method: config.method,
    host: config.host,
    requestIdPrefix: config.requestIdPrefix,
  });
  let due = 0;
  let seq = 0;
  let open = 0;
  /** Due times of requests waiting for a free connection, oldest first; `waitingAt` is the head. */
  const waiting: number[] = [];
  let waitingAt = 0;
  let waitedMax = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let finished = false;
  const maybeFinish = () => {
    if (finished || !((due >= total && waitingAt === waiting.length) || stopped) || open !== 0) return;
    finished = true;
    // unsent: due, but still waiting for a connection when the sending stopped (never sent, not a failure).
    write({
      event: 'load-end',
      ...clockNow(),
      pid: process.pid,
      ...tally,
      failed: tally.sent - tally.completed,
      stopped,
      unsent: waiting.length - waitingAt,
      waitedMaxMs: Math.round(waitedMax),
    });
    agent.destroy();
    finish();
  };
  const nextWaiting = () => {
    while (!stopped && open < config.connections && waitingAt < waiting.length) send(waiting[waitingAt++]!);
    if (waitingAt > 1024 && waitingAt * 2 > waiting.length) {
      waiting.splice(0, waitingAt);
      waitingAt = 0;
    }
  };

  function send(dueMono: number): void {
    seq++;
    open++;
    const id = `L${seq}`;
    const requestId = `${config.requestIdPrefix}-${id}`;
    const sent = clockNow();
    waitedMax = Math.max(waitedMax, sent.mono - dueMono);
    const rec: Omit<LoadRecord, 'ended' | 'latencyMs'> = {
      event: 'request',
      seq,
      id,
      requestId,
      method: config.method,
      dueMono: Math.round(dueMono * 1000) / 1000,
      sent,
      connectedAt: null,
      headersAt: null,
      reused: false,
      status: null,
      bodyHead: null,
      podUid: null,
      outcome: 'failed',
      errorCode: null,
      stage: 'connect',
      bytes: 0,
    };
    let settled = false;
    const end = (outcome: LoadRecord['outcome'], errorCode: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      const ended = clockNow();
      const record = {
        ...rec,
        ended,
        latencyMs: Math.round((ended.mono - dueMono) * 1000) / 1000,
        outcome,
        errorCode,
        stage: outcome === 'completed' ? null : rec.stage,
      } as LoadRecord;
      tally.sent++;
      if (outcome === 'completed') tally.completed++;
      if (outcome === 'rejected') tally.rejected++;
      write(record);
      open--;
      nextWaiting();
      maybeFinish();
    };
    const body = config.method === 'POST' ? `{"id":"${id}","from":"termlab-load"}\n` : null;
    const headers: Record<string, string | number> = { [LOAD_REQUEST_HEADER]: requestId };
    // Kept alive, the Agent says keep-alive itself.
    if (!config.keepAlive) headers.connection = 'close';
    if (config.host) headers.host = config.host;
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = request({
      agent,
      method: config.method,
      host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port || 80,
      path: `${path}${pathJoin}id=${id}`,
      headers,
    });
    // A request that never ends is recorded as timed out, not left open forever.
    const limit = setTimeout(
      () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
      config.drainMs,
    );
    req.on('socket', (socket) => {
      // Not req.reusedSocket: Node sets it only when addRequest finds a free socket, not when a request
      // queued in the Agent gets one as it is freed (a request sent as another ends): those read false.
      rec.reused = carried.has(socket);
      carried.add(socket);
      const connected = () => {
        rec.connectedAt = clockNow();
        rec.stage = 'request';
      };
      if (socket.connecting) socket.once('connect', connected);
      else connected();
    });
    req.on('error', (error) => end('failed', errorCodeOf(error)));
    req.on('response', (res: IncomingMessage) => {
      rec.headersAt = clockNow();
      rec.stage = 'body';
      rec.status = res.statusCode ?? null;
      const uid = res.headers[config.podHeader];
      rec.podUid = typeof uid === 'string' ? uid : null;
      let text = '';
      const decoder = new StringDecoder('utf8');
      const ok = rec.status !== null && rec.status >= 200 && rec.status < 300;
      let head = ok ? null : Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        rec.bytes += chunk.length;
        if (head !== null && head.length < BODY_HEAD_BYTES) {
          head = Buffer.concat([head, chunk.subarray(0, BODY_HEAD_BYTES - head.length)]);
          rec.bodyHead = head.toString('utf8');
        }
        text += decoder.write(chunk);
        if (text.length > 4096) text = text.slice(-4096);
      });
      res.on('error', (error) => end(rec.status === 200 ? 'cut' : 'failed', errorCodeOf(error)));
      res.on('aborted', () => end(rec.status === 200 ? 'cut' : 'failed', 'ECONNRESET'));
      res.on('end', () => {
        if (rec.status === 503) return end('rejected', null);
        if (
          config.path !== null &&
          rec.status !== null &&
          rec.status >= 200 &&
          rec.status < 300 &&
          !String(res.headers['content-type'] ?? '').includes('ndjson')
        )
          return end('completed', null);
        if (rec.status !== 200) return end('http-error', `HTTP_${rec.status}`);
        // Completed only with the server's done line: a body cut at a line boundary is still cut.
        const doneLine = text.trimEnd().split('\n').at(-1) ?? '';
        end(
          doneLine.includes('"event":"done"') ? 'completed' : 'cut',
          doneLine.includes('"event":"done"') ? null : 'NO_DONE_LINE',
        );
      });
    });
    req.end(body ?? undefined);
  }

  // Steady rate against the schedule, not the last send: a late tick sends what is due (or queues it).
  const tick = () => {
    timer = null;
    const now = performance.now();
    while (!stopped && due < total && startedMono + due * intervalMs <= now) {
      const at = startedMono + due++ * intervalMs;
      if (open < config.connections && waitingAt === waiting.length) send(at);
      else waiting.push(at);
    }
    if (!stopped && due < total)
      timer = setTimeout(tick, Math.max(0, startedMono + due * intervalMs - performance.now()));
    maybeFinish();
  };
  tick();
  return {
    tally,
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      maybeFinish();
    },
  };
}
