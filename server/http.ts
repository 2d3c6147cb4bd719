// What the lab's HTTP servers share: a JSON answer, and the drain on TERM that the app and the proxy
// both do (stop listening, close idle connections, exit 0 once the work is done and every response flushed).
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

export function createDrain(state: DrainState, logEvent: DrainLog, exit: (code: number) => void) {
  let exited = false;
  // Every response still being written, work or not: exit only once all are flushed,
  // so no done line or 503 is lost in a buffer when the process ends.
  let openResponses = 0;

  function finish(code: number): void {
    if (exited) return;
    exited = true;
    logEvent('exit', { code });
    exit(code);
  }

  function exitIfDrained(): void {
    if (state.draining && state.active === 0 && openResponses === 0 && !exited) {
      logEvent('drained', { completed: state.completed, rejected: state.rejected });
      finish(0);
    }
  }

  /** Counts a response open until its socket closes. */
  function track(res: ServerResponse): void {
    openResponses++;
    res.on('close', () => {
      openResponses--;
      exitIfDrained();
    });
  }

  /** No timer of its own: the grace period is the only limit. */
  function drain(server: Server): void {
    state.draining = true;
    logEvent('draining', { active: state.active });
    server.close();
    server.closeIdleConnections();
    exitIfDrained();
  }

  return { finish, exitIfDrained, track, drain, exited: () => exited };
}
