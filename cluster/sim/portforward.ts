// pods/portforward over WebSocket (v4.channel.k8s.io), as @kubernetes/client-node's PortForward
// speaks it: a channel byte before each frame, channels 0 (data) and 1 (error) per port, and the
// port as 2 bytes little-endian in the first frame of each channel.
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

const PROTOCOLS = ['v4.channel.k8s.io', 'channel.k8s.io'];

export function createPortForwardServer() {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  /** `port` is the pod's container port (named in the frames); `target` is where the kubelet publishes it. */
  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: { host: string; port: number }, port: number): void {
    wss.handleUpgrade(req, socket, head, (ws) => forward(ws, target, port));
  }

  function forward(ws: WebSocket, target: { host: string; port: number }, port: number): void {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port);
    ws.send(Buffer.concat([Buffer.from([0]), portBytes]));
    ws.send(Buffer.concat([Buffer.from([1]), portBytes]));
    const upstream = connect({ host: target.host, port: target.port });
    upstream.on('data', (chunk) => ws.send(Buffer.concat([Buffer.from([0]), chunk])));
    upstream.on('error', (error) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(`error forwarding port ${port} to pod: ${error.message}`)]));
    });
    upstream.on('close', () => ws.close());
    ws.on('message', (data: Buffer) => {
      if (data.length > 0 && data[0] === 0) upstream.write(data.subarray(1));
    });
    ws.on('close', () => upstream.destroy());
    ws.on('error', () => upstream.destroy());
  }

  return { handleUpgrade, close: () => { for (const client of wss.clients) client.terminate(); wss.close(); } };
}
