// A local port that forwards to a pod's port through the API server (client-node PortForward),
// one WebSocket per connection. Error-channel text is kept: a broken forward is not a server cut.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { PortForward } from '@kubernetes/client-node';
import type { Cluster } from './connect.ts';
import { withRetry } from './retry.ts';

export interface PortForwardHandle {
  localPort: number;
  /** Messages from the error channel or failures to open the stream, in order. */
  errors: string[];
  close(): Promise<void>;
}

/** What a port-forward needs of a cluster: its kubeconfig and the run's retry budget. */
export type PortForwardTarget = Pick<Cluster, 'kc' | 'health' | 'context' | 'server'>;

export async function openPortForward(cluster: PortForwardTarget, namespace: string, pod: string, port: number): Promise<PortForwardHandle> {
  const forwarder = new PortForward(cluster.kc, true);
  const errors: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that gives up (Ctrl-C, a cut) resets the socket; that is an end, not a crash.
    socket.on('error', () => socket.destroy());
    const errorChannel = new Writable({ write(chunk, _enc, done) { errors.push(chunk.toString()); done(); } });
    // Opening the stream is an API call like any other: tried again within the outage budget.
    withRetry(cluster, `port-forward to ${namespace}/${pod}:${port}`, () => forwarder.portForward(namespace, pod, [port], socket, errorChannel, socket)).then((ws) => {
      if (typeof ws === 'function') return;
      // The stream's end is the connection's end: the pod side closed or the API server dropped it.
      ws.on('close', () => socket.destroy());
      socket.on('close', () => ws.close());
    }, (error: Error) => {
      errors.push(`port-forward to ${namespace}/${pod}:${port} failed: ${error.message}`);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    localPort: (server.address() as AddressInfo).port,
    errors,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
