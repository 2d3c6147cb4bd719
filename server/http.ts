// What the lab's HTTP servers share: a JSON answer, and the drain on TERM that the app and the proxy
// both do (stop listening, close idle connections, exit 0 once the work is done and every response flushed;
// the app's polite variant leaves its kept-alive sockets to close one by one, and waits for them).
import type { Server, ServerResponse } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Listens on port and host; `listening` logs the address bound before the promise resolves with it. */
export function listenOn(
  server: Server,
  port: number,
  host: string,
  listening: (address: AddressInfo) => void,
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      listening(address);
      resolve(address);
    });
  });
}

/** The counts a draining server keeps and logs; `active` is its requests still at work. */
interface DrainState {
  active: number;
  completed: number;
  rejected: number;
  draining: boolean;
}
/** The lines the drain writes, which the app's and the proxy's writers both have with these fields. */
interface DrainLog {
  (event: 'draining', fields: { active: number }): void;
  (event: 'drained', fields: { completed: number; rejected: number }): void;
  (event: 'exit', fields: { code: number }): void;
}

/**
 * polite (LAB_KEEPALIVE): at TERM the kept-alive sockets are not closed under a client that may be
 * sending on them; each closes once no request is on it, and the exit waits for the last.
 * Otherwise (naive, unset) Node's server.close(), which closes every idle one at once.
 */
export interface DrainOptions {
  polite?: boolean;
  /** polite: the idle timeout a socket that never carried a request gets at TERM (Node arms none for it). */
  keepAliveTimeoutMs?: number;
}

export function createDrain(
  state: DrainState,
  logEvent: DrainLog,
  exit: (code: number) => void,
  options: DrainOptions = {},
) {
  let exited = false;
  // Every response still being written, work or not: exit only once all are flushed,
  // so no done line or 503 is lost in a buffer when the process ends.
  let openResponses = 0;
  // polite: requests not yet answered on each socket, and whether any socket is still open after TERM.
  const onSocket = new Map<Socket, number>();
  let socketsOpen = false;
  // polite: sockets that have not carried a request yet (an edge's pool can hold one it dialled and never used).
  const unused = new Set<Socket>();

  function finish(code: number): void {
    if (exited) return;
    exited = true;
    logEvent('exit', { code });
    exit(code);
  }

  function exitIfDrained(): void {
    if (state.draining && state.active === 0 && openResponses === 0 && !socketsOpen && !exited) {
      logEvent('drained', { completed: state.completed, rejected: state.rejected });
      finish(0);
    }
  }

  /** Counts a response open until its socket closes. */
  function track(res: ServerResponse): void {
    openResponses++;
    const socket = options.polite ? res.socket : null;
    if (socket) {
      // Its first request: the idle timer set at TERM must not cut it (Node's own answer-to-answer timer takes over).
      if (unused.delete(socket) && state.draining) socket.setTimeout(0);
      // After TERM the answer tells the client to leave, and Node closes the socket once it is sent.
      if (state.draining) res.setHeader('connection', 'close');
      onSocket.set(socket, (onSocket.get(socket) ?? 0) + 1);
    }
    res.on('close', () => {
      openResponses--;
      if (socket) {
        const left = onSocket.get(socket)! - 1;
        if (left > 0) onSocket.set(socket, left);
        else {
          onSocket.delete(socket);
          // Begun before TERM (its headers said keep-alive): nothing is on it now, so it closes.
          if (state.draining) socket.end();
        }
      }
      exitIfDrained();
    });
  }

  /** polite: follows the server's connections, to know at TERM which never carried a request. */
  function watch(server: Server): void {
    if (!options.polite) return;
    server.on('connection', (socket: Socket) => {
      unused.add(socket);
      socket.once('close', () => unused.delete(socket));
    });
  }

  /** No timer of its own: the grace period is the only limit. */
  function drain(server: Server): void {
    state.draining = true;
    logEvent('draining', { active: state.active });
    if (options.polite) {
      socketsOpen = true;
      // net's close stops listening and leaves the open sockets alone; http's (Node 19+) closes the idle ones.
      server.once('close', () => {
        socketsOpen = false;
        exitIfDrained();
      });
      // A socket busy at TERM closes after its answer (track); an idle one at its keep-alive timeout, or after
      // the answer to its next request (Connection: close). One that never carried a request has no keep-alive
      // timer (Node arms it after an answer): it gets the same timeout from now (Node's socketOnTimeout ends it).
      for (const socket of unused) socket.setTimeout(options.keepAliveTimeoutMs!);
      NetServer.prototype.close.call(server);
    } else {
      server.close();
      server.closeIdleConnections();
    }
    exitIfDrained();
  }

  return { finish, exitIfDrained, track, watch, drain, exited: () => exited };
}
