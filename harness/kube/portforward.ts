// A local port that forwards to a pod's port through the API server (client-node PortForward),
// one WebSocket per connection. Error-channel text is kept: a broken forward is not a server cut.
// Each connection's life (opened, error, closed, and which side closed it) is kept too: the
// forward rides the API server's own connections, so a lost forward is the harness's loss.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { PortForward } from '@kubernetes/client-node';
import type { Cluster } from './connect.ts';
import { withRetry } from './retry.ts';

/** One moment in one forwarded connection's life, on the caller's clock. */
export interface ForwardEvent<Time> {
  /** The local connection's number, from 1, in the order they were accepted. */
  connection: number;
  event: 'opened' | 'error' | 'closed';
  at: Time;
  /** For 'closed': the harness (its client finished or gave up) or the remote side (API server, kubelet, pod). */
  by?: 'harness' | 'remote';
  /** For 'closed' by the remote side: the WebSocket close code (1006: cut without a close frame). */
  code?: number | null;
  detail?: string;
}

export interface PortForwardHandle<Time = unknown> {
  localPort: number;
  /** Messages from the error channel or failures to open the stream, in order. */
  errors: string[];
  /** Every connection's open, errors and close, in the order they happened. */
  life: ForwardEvent<Time>[];
  close(): Promise<void>;
}

/** What a port-forward needs of a cluster: its kubeconfig and the run's retry budget. */
export type PortForwardTarget = Pick<Cluster, 'kc' | 'health' | 'context' | 'server'>;

const MAX_DETAIL = 300;

export async function openPortForward<Time = number>(
  cluster: PortForwardTarget,
  namespace: string,
  pod: string,
  port: number,
  now: () => Time = () => performance.now() as Time,
): Promise<PortForwardHandle<Time>> {
  const forwarder = new PortForward(cluster.kc, true);
  const errors: string[] = [];
  const life: ForwardEvent<Time>[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    const connection = ++connections;
    let closed = false;
    const record = (event: Omit<ForwardEvent<Time>, 'connection' | 'at'>) => {
      if (closed) return;
      if (event.event === 'closed') closed = true;
      life.push({
        connection,
        at: now(),
        ...event,
        ...(event.detail ? { detail: event.detail.slice(0, MAX_DETAIL) } : {}),
      });
    };
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that gives up (Ctrl-C, a cut) resets the socket; that is an end, not a crash.
    socket.on('error', () => socket.destroy());
    const errorChannel = new Writable({
      write(chunk, _enc, done) {
        // The API server opens the error channel with an empty frame (seen on the node): no error.
        if (chunk.length === 0 || chunk.toString().trim() === '') {
          done();
          return;
        }
        errors.push(chunk.toString());
        record({ event: 'error', detail: `error channel: ${chunk.toString()}` });
        done();
      },
    });
    // Opening the stream is an API call like any other: tried again within the outage budget.
    withRetry(cluster, `port-forward to ${namespace}/${pod}:${port}`, () =>
      forwarder.portForward(namespace, pod, [port], socket, errorChannel, socket),
    ).then(
      (ws) => {
        if (typeof ws === 'function') return;
        record({ event: 'opened' });
        // The stream's end is the connection's end: the pod side closed or the API server dropped it.
        ws.on('error', (error: Error) => record({ event: 'error', detail: error.message }));
        ws.on('close', (code: number, reason: Buffer) => {
          record({ event: 'closed', by: 'remote', code, ...(reason?.length ? { detail: reason.toString() } : {}) });
          socket.destroy();
        });
        socket.on('close', () => {
          record({ event: 'closed', by: 'harness' });
          ws.close();
        });
        if (socket.destroyed) {
          record({ event: 'closed', by: 'harness' });
          ws.close();
        }
      },
      (error: Error) => {
        errors.push(`port-forward to ${namespace}/${pod}:${port} failed: ${error.message}`);
        record({ event: 'error', detail: `could not open: ${error.message}` });
        record({ event: 'closed', by: 'remote', code: null });
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    localPort: (server.address() as AddressInfo).port,
    errors,
    life,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
