// pods/portforward over WebSocket, in the two forms clients speak:
// - v4.channel.k8s.io, as @kubernetes/client-node's PortForward speaks it: a channel byte before
//   each frame, channels 0 (data) and 1 (error) per port, and the port as 2 bytes little-endian in
//   the first frame of each channel;
// - SPDY/3.1+portforward.k8s.io, kubectl's tunnel (KEP-4006): SPDY carried in binary WebSocket
//   messages, with an error and a data stream per forwarded connection (portforward-tunnel.ts).
// Pods are reached only through the kubelet's portTarget.
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { PORT_FORWARD_PROTOCOL, type PortForwardPod, serveTunnel, TUNNELING_PREFIX } from './portforward-tunnel.ts';
import { badRequest } from './status.ts';

const CHANNEL_PROTOCOLS = ['v4.channel.k8s.io', 'channel.k8s.io'];
const MAX_PORT = 65535;

/** The protocols a client offered, read from the raw header (ws rejects kubectl's `SPDY/3.1+…` names). */
const offeredProtocols = (req: IncomingMessage) =>
  (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

export function createPortForwardServer() {
  const negotiated = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (_offered, req) => negotiated.get(req) ?? false });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, pod: PortForwardPod): void {
    const offered = offeredProtocols(req);
    if (offered.includes(TUNNELING_PREFIX + PORT_FORWARD_PROTOCOL)) {
      negotiated.set(req, TUNNELING_PREFIX + PORT_FORWARD_PROTOCOL);
      // ws would refuse the '/' in kubectl's protocol name; the answer still names it exactly.
      req.headers['sec-websocket-protocol'] = PORT_FORWARD_PROTOCOL;
      wss.handleUpgrade(req, socket, head, (ws) => serveTunnel(ws, pod));
      return;
    }
    const port = Number(url.searchParams.get('ports'));
    if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) throw badRequest('ports: one port number is required');
    const protocol = CHANNEL_PROTOCOLS.find((p) => offered.includes(p));
    if (protocol) negotiated.set(req, protocol);
    wss.handleUpgrade(req, socket, head, (ws) => forwardChannels(ws, pod, port));
  }

  /**
   * Fault: every port-forward connection reset at once, the API left healthy: what a laptop's
   * network change or a NAT entry dropped mid-stream does (a TCP reset, no WebSocket close frame).
   * kubectl port-forward then says "lost connection to pod" and exits; the pod's server sees its
   * client go. Not yet measured on the node by itself (the node suite's "port-forward reset" row).
   */
  function resetAll(): number {
    const count = wss.clients.size;
    for (const client of wss.clients) client.terminate();
    return count;
  }

  return {
    handleUpgrade,
    resetAll,
    close: () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

function forwardChannels(ws: WebSocket, pod: PortForwardPod, port: number): void {
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16LE(port);
  ws.send(Buffer.concat([Buffer.from([0]), portBytes]));
  ws.send(Buffer.concat([Buffer.from([1]), portBytes]));
  const target = pod.target(port);
  if (!target) {
    // Only a running pod gets here (api.ts): an unpublished port is one nobody listens on.
    ws.send(
      Buffer.concat([
        Buffer.from([1]),
        Buffer.from(
          `error forwarding port ${port} to pod ${pod.uid}, uid : failed to connect to localhost:${port} inside the pod: dial tcp4 127.0.0.1:${port}: connect: connection refused`,
        ),
      ]),
    );
    ws.close();
    return;
  }
  const upstream = connect(target);
  pod.opened?.(upstream);
  upstream.on('data', (chunk) => ws.send(Buffer.concat([Buffer.from([0]), chunk])));
  upstream.on('error', (error) => {
    if (ws.readyState === ws.OPEN)
      ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(`error forwarding port ${port} to pod: ${error.message}`)]));
  });
  upstream.on('close', () => ws.close());
  ws.on('message', (data: Buffer) => {
    if (data.length > 0 && data[0] === 0) upstream.write(data.subarray(1));
  });
  ws.on('close', () => upstream.destroy());
  ws.on('error', () => upstream.destroy());
}
