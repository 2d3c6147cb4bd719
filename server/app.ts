import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import type { ServerConfig } from './config.ts';
import {
  HOOK_HTTP_PATH,
  IDEMPOTENCY_HEADER,
  LAB_EXIT_CODES,
  LAB_KEEPALIVE_TIMEOUT_DEFAULT_MS,
  LAB_TERM_ALLOCATE_MIB_PER_SECOND,
  LEDGER_PATHS,
  type LedgerResult,
} from './contract.ts';
import { clockNow, type LogEvent } from './events.ts';
import { createDrain, listenOn, sendJson } from './http.ts';
import { parseMs, parseRequestId, WORK_MS_MAX, WORK_MS_MIN } from './work.ts';

export const PROGRESS_INTERVAL_MS = 250;
/** The ledger answers on the same node in milliseconds; past this the effect is logged as failed. */
const LEDGER_TIMEOUT_MS = 5000;
const MIB = 1024 * 1024;
/** How fast the memory grows after TERM: past any readiness probe period before a 192 MiB limit is hit. */
const ALLOCATE_MIB_PER_SECOND = LAB_TERM_ALLOCATE_MIB_PER_SECOND;
/** A POST /work body is read and counted, not kept: the load's is a few dozen bytes. */
const POST_BODY_MAX = 64 * 1024;

export interface LabState {
  mode: ServerConfig['mode'];
  pid: number;
  active: number;
  accepted: number;
  completed: number;
  rejected: number;
  draining: boolean;
  startedAt: string;
  signalAt: string | null;
}

export function createLabServer(config: ServerConfig, logEvent: LogEvent, exit: (code: number) => void) {
  const state: LabState = {
    mode: config.mode,
    pid: process.pid,
    active: 0,
    accepted: 0,
    completed: 0,
    rejected: 0,
    draining: false,
    startedAt: clockNow().time,
    signalAt: null,
  };
  const { finish, exitIfDrained, track, watch, drain, exited } = createDrain(state, logEvent, exit, {
    polite: config.keepAlive === 'polite',
    keepAliveTimeoutMs: config.keepAliveTimeoutMs ?? LAB_KEEPALIVE_TIMEOUT_DEFAULT_MS,
  });
  let nextRequest = 0;

  /**
   * The work's side effect: one call to the ledger, logged with its answer. No retry of its own: a
   * call that fails is logged as failed, and the work goes on (the effect is what the lab counts).
   */
  function callLedger(id: string, key: string | null, point: 'start' | 'end'): Promise<void> {
    const effect = config.effect!;
    const body = JSON.stringify({ id, key, podUid: config.podUid ?? null, podName: config.podName ?? null, point });
    return new Promise((resolve) => {
      const failed = (error: string) => {
        logEvent('effect', { id, key, point, result: 'failed', seq: null, error: error.slice(0, 200) });
        resolve();
      };
      const req = httpRequest(
        `${effect.ledgerUrl}${LEDGER_PATHS.effect}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: LEDGER_TIMEOUT_MS,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => {
            let answer: { result?: unknown; seq?: unknown } = {};
            try {
              answer = JSON.parse(text);
            } catch {
              /* told below */
            }
            const ok =
              res.statusCode === 200 &&
              (answer.result === 'applied' || answer.result === 'already-applied') &&
              Number.isInteger(answer.seq);
            if (!ok) return failed(`the ledger answered ${res.statusCode}: ${text.trim()}`);
            logEvent('effect', { id, key, point, result: answer.result as LedgerResult, seq: answer.seq as number });
            resolve();
          });
          res.on('error', (error) => failed(error.message));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${LEDGER_TIMEOUT_MS} ms`)));
      req.on('error', (error) => failed((error as NodeJS.ErrnoException).code ?? error.message));
      req.end(body);
    });
  }

  function handleWork(url: URL, req: IncomingMessage, res: ServerResponse, bodyBytes?: number): void {
    const ms = parseMs(url.searchParams.get('ms'), WORK_MS_MIN, WORK_MS_MAX);
    const id = parseRequestId(url.searchParams.get('id'), () => `r${++nextRequest}`);
    if (!ms.ok) return sendJson(res, 400, { error: ms.message, parameter: ms.parameter });
    if (!id.ok) return sendJson(res, 400, { error: id.message, parameter: id.parameter });
    if (state.draining) {
      state.rejected++;
      logEvent('rejected', { id: id.value, reason: 'draining' });
      return sendJson(res, 503, { event: 'rejected', id: id.value, reason: 'draining' }, { connection: 'close' });
    }
    const key = req.headers[IDEMPOTENCY_HEADER];
    runWork(id.value, ms.value, typeof key === 'string' && key !== '' ? key : null, res, bodyBytes);
  }

  /** POST /work (LOAD_METHOD=POST: the request an edge must not replay): the same work once its body is in. */
  function handlePostWork(url: URL, req: IncomingMessage, res: ServerResponse): void {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    // Read to its end either way, so the 413 is not lost to a reset while the client still sends.
    req.on('end', () => {
      if (bodyBytes > POST_BODY_MAX)
        return sendJson(res, 413, { error: `body of ${bodyBytes} bytes, over ${POST_BODY_MAX}` });
      handleWork(url, req, res, bodyBytes);
    });
  }

  function runWork(id: string, ms: number, key: string | null, res: ServerResponse, bodyBytes?: number): void {
    state.accepted++;
    state.active++;
    const digest = createHash('sha256');
    let bytes = 0;
    const write = (record: object): string => {
      const line = JSON.stringify(record) + '\n';
      digest.update(line);
      bytes += Buffer.byteLength(line);
      return line;
    };
    const startedMono = performance.now();
    const headers: Record<string, string> = {
      'content-type': 'application/x-ndjson',
      'cache-control': 'no-store',
      'x-request-id': id,
    };
    if (config.podUid) headers['x-pod-uid'] = config.podUid;
    res.writeHead(200, headers);
    res.write(write({ event: 'accepted', id, ms, podUid: config.podUid ?? null, ...clockNow() }));
    logEvent('accepted', bodyBytes === undefined ? { id, ms } : { id, ms, method: 'POST', bodyBytes });
    // The effect at the start: made while the work runs; a kill later cannot undo it.
    if (config.effect?.point === 'start') void callLedger(id, key, 'start');

    const progress = setInterval(() => {
      res.write(write({ event: 'progress', id, elapsedMs: Math.round(performance.now() - startedMono) }));
    }, PROGRESS_INTERVAL_MS);
    let gone = false;
    const answer = () => {
      if (gone) return;
      res.end(`${JSON.stringify({ event: 'done', id, bytes, digest: digest.digest('hex') })}\n`);
    };
    const done = setTimeout(() => {
      clearInterval(progress);
      // The effect at the end: committed before the answer, so a kill before the end never made it.
      if (config.effect?.point === 'end') void callLedger(id, key, 'end').then(answer);
      else answer();
    }, ms);
    // Completed only once the done line is handed to the kernel; otherwise the client cut it.
    res.on('finish', () => {
      state.active--;
      state.completed++;
      logEvent('completed', { id, ms, bytes });
    });
    res.on('close', () => {
      if (res.writableFinished) return;
      gone = true;
      clearInterval(progress);
      clearTimeout(done);
      state.active--;
      logEvent('aborted', { id, elapsedMs: Math.round(performance.now() - startedMono) });
      // A client gone while draining may have been the last: without this the server's event loop
      // emptied and it exited 0 unlogged (no drained, no exit line; found by a reset after TERM).
      exitIfDrained();
    });
  }

  function handleHook(url: URL, res: ServerResponse): void {
    const ms = parseMs(url.searchParams.get('ms'), 0, WORK_MS_MAX);
    if (!ms.ok) return sendJson(res, 400, { error: ms.message, parameter: ms.parameter });
    logEvent('hook-start', { kind: 'httpGet', ms: ms.value });
    setTimeout(() => {
      logEvent('hook-end', { kind: 'httpGet', ms: ms.value });
      sendJson(res, 200, { event: 'hook-end', ms: ms.value });
    }, ms.value);
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://lab.invalid');
    if (req.method === 'POST' && url.pathname === '/work') return handlePostWork(url, req, res);
    if (req.method !== 'GET')
      return sendJson(
        res,
        405,
        { error: `method ${req.method} not allowed` },
        { allow: url.pathname === '/work' ? 'GET, POST' : 'GET' },
      );
    switch (url.pathname) {
      case '/work':
        return handleWork(url, req, res);
      case '/readyz':
        return sendJson(res, state.draining ? 503 : 200, { ready: !state.draining });
      case '/healthz':
        return sendJson(res, 200, { alive: true });
      case '/state':
        return sendJson(res, 200, state);
      case HOOK_HTTP_PATH:
        return handleHook(url, res);
      default:
        return sendJson(res, 404, { error: `no such path ${url.pathname}` });
    }
  }

  const server = createServer(
    { keepAliveTimeout: config.keepAliveTimeoutMs ?? LAB_KEEPALIVE_TIMEOUT_DEFAULT_MS },
    (req, res) => {
      // Every answer names its pod, a draining 503 too: behind a Service that is how a client tells them apart.
      if (config.podUid) res.setHeader('x-pod-uid', config.podUid);
      track(res);
      route(req, res);
    },
  );
  watch(server);

  const listen = () =>
    listenOn(server, config.port, config.host, (address) =>
      logEvent('listening', {
        mode: config.mode,
        host: address.address,
        port: address.port,
        drainSignal: config.drainSignal,
        // Only when set, so a server without them logs the line it always did.
        ...(config.keepAlive !== null || config.keepAliveTimeoutMs !== null
          ? {
              keepAlive: config.keepAlive,
              keepAliveTimeoutMs: config.keepAliveTimeoutMs ?? LAB_KEEPALIVE_TIMEOUT_DEFAULT_MS,
            }
          : {}),
      }),
    );

  function terminate(signal: NodeJS.Signals): void {
    if (exited()) return;
    const repeated = state.signalAt !== null;
    logEvent('signal', { signal, repeated });
    // nginx's story (KEP-4960): a server that drains on another signal takes TERM (and INT) as its fast
    // stop, and leaves at once, draining or not.
    if (config.mode === 'graceful' && config.drainSignal !== 'SIGTERM' && signal !== config.drainSignal)
      return finish(LAB_EXIT_CODES.immediate);
    if (repeated) return;
    state.signalAt = clockNow().time;
    if (config.termAllocateMiB > 0) allocate(config.termAllocateMiB);
    if (config.mode === 'immediate') return finish(LAB_EXIT_CODES.immediate);
    // Logs the signal and carries on as if nothing happened: only SIGKILL ends it.
    if (config.mode === 'ignore-term') return;
    // No timer of our own: the grace period is the only limit, which is the point of the lab.
    drain(server);
  }

  // Touched 1 MiB at a time, off the JS heap, so the memory limit (the kernel's OOM killer), not
  // V8's heap limit, is what stops it. Paced like a leak, not a burst: at full speed the limit was
  // reached 0.3 s after TERM, and whether a readiness probe saw the drain first was a coin flip.
  const held: Buffer[] = [];
  function allocate(mib: number): void {
    logEvent('allocating', { mib, mibPerSecond: ALLOCATE_MIB_PER_SECOND });
    const began = performance.now();
    const step = () => {
      // Catches up after a late timer, so a loaded machine keeps the same rate.
      const due = Math.min(mib, Math.floor(((performance.now() - began) / 1000) * ALLOCATE_MIB_PER_SECOND) + 1);
      while (held.length < due && !exited()) held.push(Buffer.alloc(MIB, 1));
      if (held.length < mib && !exited()) setTimeout(step, 1000 / ALLOCATE_MIB_PER_SECOND);
    };
    step();
  }

  return { server, state, listen, terminate };
}
