// LAB_MODE=proxy: the lab server as a sidecar proxy in front of the app container. Each request is
// forwarded to 127.0.0.1:<upstream port> (a pod's containers share one network namespace), on a
// connection of its own, so a request's fate is its own. On TERM it either exits at once, as many
// proxies do by default (what is in flight is cut, the app's side of it too), or stops accepting
// and drains its open requests with no timer of its own, as the app's graceful mode does.
import { createServer, type IncomingHttpHeaders, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ProxyConfig } from './config.ts';
import { LAB_EXIT_CODES, PROXY_OWN_PATHS, type ProxyOutcome } from './contract.ts';
import type { LogProxyEvent } from './events.ts';
import { createDrain, listenOn, sendJson } from './http.ts';
import { parseRequestId } from './work.ts';

/** RFC 9110 7.6.1: headers of one connection, never passed on; Node frames the body itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(name) && !named.has(name)) kept[name] = value;
  return kept;
}

export function createProxy(config: ProxyConfig, logEvent: LogProxyEvent, exit: (code: number) => void) {
  const state = { active: 0, completed: 0, rejected: 0, draining: false, signalled: false };
  const { finish, exitIfDrained, track, drain, exited } = createDrain(state, logEvent, exit);
  let nextRequest = 0;

  function forward(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const given = parseRequestId(url.searchParams.get('id'), () => `p${++nextRequest}`);
    const id = given.ok ? given.value : `p${++nextRequest}`;
    const path = req.url ?? '/';
    if (state.draining) {
      state.rejected++;
      logEvent('rejected', { id, reason: 'draining' });
      return sendJson(res, 503, { event: 'rejected', id, reason: 'draining', by: 'proxy' }, { connection: 'close' });
    }
    logEvent('accepted', { id, method: req.method ?? 'GET', path });
    state.active++;
    const began = performance.now();
    let bytes = 0;
    let status: number | null = null;
    let settled = false;
    const settle = (outcome: ProxyOutcome, error?: string) => {
      if (settled) return;
      settled = true;
      state.active--;
      if (outcome === 'completed') state.completed++;
      logEvent('upstream-done', {
        id,
        outcome,
        status,
        bytes,
        elapsedMs: Math.round(performance.now() - began),
        ...(error ? { error } : {}),
      });
      exitIfDrained();
    };

    // agent: false, a connection per request: a kept-alive pool would tie one request's end to another's.
    const upstream = request({
      host: '127.0.0.1',
      port: config.upstreamPort,
      method: req.method,
      path,
      headers: endToEnd(req.headers),
      agent: false,
    });
    upstream.on('socket', (socket) => socket.once('connect', () => logEvent('forwarded', { id })));
    upstream.on('response', (answer) => {
      status = answer.statusCode ?? null;
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.write(chunk);
      });
      answer.on('end', () => res.end());
      // A reset mid-answer is also an 'error' here; unheard it would end the process.
      answer.on('error', (error: NodeJS.ErrnoException) => {
        settle('cut', error.code ?? error.message);
        res.destroy();
      });
      answer.on('close', () => {
        if (answer.complete) return;
        // The app's answer stopped short: the client's is cut the same way, not ended as if whole.
        settle('cut', 'upstream closed before the end of its answer');
        res.destroy();
      });
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      if (res.headersSent) {
        settle('cut', error.code ?? error.message);
        res.destroy();
        return;
      }
      settle('failed', error.code ?? error.message);
      sendJson(res, 502, { error: 'the app did not answer the proxy', code: error.code ?? null, id });
    });
    // Whole only once the last byte is handed to the kernel (as the app's `completed`).
    res.on('finish', () => {
      if (status !== null) settle('completed');
    });
    res.on('close', () => {
      if (res.writableFinished) return;
      settle('client-gone');
      upstream.destroy();
    });
    // The client's reset is seen by `res` as a close; its 'error' here must not end the process.
    req.on('error', () => {});
    req.pipe(upstream);
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    switch (url.pathname) {
      case PROXY_OWN_PATHS.healthz:
        return sendJson(res, 200, { alive: true, by: 'proxy' });
      case PROXY_OWN_PATHS.readyz:
        return sendJson(res, state.draining ? 503 : 200, { ready: !state.draining, by: 'proxy' });
      default:
        return forward(req, res, url);
    }
  }

  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    track(res);
    route(req, res);
  });

  const listen = () =>
    listenOn(server, config.port, config.host, (address) =>
      logEvent('listening', {
        host: address.address,
        port: address.port,
        upstreamPort: config.upstreamPort,
        onTerm: config.onTerm,
      }),
    );

  function terminate(signal: NodeJS.Signals): void {
    if (exited()) return;
    logEvent('signal', { signal, repeated: state.signalled });
    if (state.signalled) return;
    state.signalled = true;
    // The process's end closes every socket: the client's and the app's connections are reset.
    if (config.onTerm === 'exit') return finish(LAB_EXIT_CODES.immediate);
    drain(server);
  }

  return { server, state, listen, terminate };
}
