// kubectl's port-forward tunnel (KEP-4006): SPDY/3.1 carried as a byte stream in binary WebSocket
// messages, served as the kubelet serves portforward.k8s.io (cri/streaming/portforward/httpstream.go):
// per forwarded connection the client opens an error stream and a data stream with the same
// requestID and port; both are answered with SYN_REPLY; once both are there the data stream is
// joined to the pod's port, and a failure is written on the error stream.
import { connect, type Socket } from 'node:net';
import type { WebSocket } from 'ws';
import {
  FLAG_FIN,
  GoAwayStatus,
  RstStreamStatus,
  SpdyFrameReader,
  SpdyFrameWriter,
  SpdyProtocolError,
  type SpdyFrame,
  type SpdyHeaders,
} from './spdy.ts';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** WebsocketsSPDYTunnelingPrefix in apimachinery's portforward constants. */
export const TUNNELING_PREFIX = 'SPDY/3.1+';
const MAX_PORT = 65535;
const REQUEST_ID_STRIDE = 2;

/** The pod a port-forward goes to, as the kubelet lets it be reached (both forms: portforward.ts's channels and this tunnel). */
export interface PortForwardPod {
  name: string;
  uid: string;
  target(containerPort: number): { host: string; port: number } | undefined;
  /** The stream to the pod is open (the kubelet proxies it: kubelet-server.ts). */
  opened?(upstream: Socket): void;
}

interface StreamPair {
  requestId: string;
  port: number;
  errorStream?: number;
  dataStream?: number;
  upstream?: ReturnType<typeof connect>;
  done: boolean;
}

/** The stream's headers as httpStreamReceived checks them; a string is the reason to refuse it. */
function readStreamHeaders(
  headers: SpdyHeaders,
): { type: 'error' | 'data'; port: number; requestId: string | undefined } | string {
  const portText = headers.port?.[0];
  if (!portText) return '"port" header is required';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > MAX_PORT) return `unable to parse "${portText}" as a port`;
  const type = headers.streamtype?.[0];
  if (type !== 'error' && type !== 'data') return `invalid stream type "${type ?? ''}"`;
  return { type, port, requestId: headers.requestid?.[0] };
}

export function serveTunnel(ws: WebSocket, pod: PortForwardPod): void {
  const reader = new SpdyFrameReader();
  const writer = new SpdyFrameWriter();
  const pairs = new Map<string, StreamPair>();
  const byStream = new Map<number, StreamPair>();
  let lastStreamId = 0;
  const send = (frame: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(frame);
  };

  ws.on('message', (message: Buffer) => {
    let frames: SpdyFrame[];
    try {
      frames = reader.push(message);
    } catch (error) {
      if (!(error instanceof SpdyProtocolError)) throw error;
      send(writer.goAway(lastStreamId, GoAwayStatus.ProtocolError));
      ws.close();
      return;
    }
    for (const frame of frames) handleFrame(frame);
  });
  ws.on('close', () => {
    for (const pair of pairs.values()) pair.upstream?.destroy();
  });

  function handleFrame(frame: SpdyFrame): void {
    switch (frame.kind) {
      case 'synStream':
        return newStream(frame.streamId, frame.headers);
      case 'data':
        return streamData(frame.streamId, frame.data, (frame.flags & FLAG_FIN) !== 0);
      case 'rstStream':
        return streamReset(frame.streamId);
      // Pings from the client (odd ids) are answered with the same frame.
      case 'ping':
        return send(writer.ping(frame.id));
      case 'goAway':
        ws.close();
        return;
      default:
        return;
    }
  }

  function newStream(streamId: number, headers: SpdyHeaders): void {
    lastStreamId = Math.max(lastStreamId, streamId);
    const stream = readStreamHeaders(headers);
    if (typeof stream === 'string') return send(writer.rstStream(streamId, RstStreamStatus.RefusedStream));
    send(writer.synReply(streamId));
    // Without a requestID header, the kubelet pairs streams by their ids (error n, data n + 2).
    const requestId = stream.requestId ?? String(stream.type === 'error' ? streamId : streamId - REQUEST_ID_STRIDE);
    let pair = pairs.get(requestId);
    if (!pair) {
      pair = { requestId, port: stream.port, done: false };
      pairs.set(requestId, pair);
    }
    const slot = stream.type === 'error' ? 'errorStream' : 'dataStream';
    if (pair[slot] !== undefined) {
      send(
        writer.data(
          pair.errorStream ?? streamId,
          Buffer.from(`error processing stream for request ${requestId}: ${stream.type} stream already assigned`),
        ),
      );
      return send(writer.rstStream(streamId, RstStreamStatus.ProtocolError));
    }
    pair[slot] = streamId;
    byStream.set(streamId, pair);
    if (pair.errorStream !== undefined && pair.dataStream !== undefined) forward(pair);
  }

  function streamData(streamId: number, data: Buffer, fin: boolean): void {
    const pair = byStream.get(streamId);
    if (!pair || streamId !== pair.dataStream || !pair.upstream) return;
    if (data.length) pair.upstream.write(data);
    if (fin) pair.upstream.end();
  }

  function streamReset(streamId: number): void {
    const pair = byStream.get(streamId);
    if (!pair) return;
    byStream.delete(streamId);
    if (streamId === pair.dataStream) pair.upstream?.destroy();
  }

  function finish(pair: StreamPair): void {
    if (pair.done) return;
    pair.done = true;
    pairs.delete(pair.requestId);
    if (pair.errorStream !== undefined) byStream.delete(pair.errorStream);
    if (pair.dataStream !== undefined) byStream.delete(pair.dataStream);
  }

  function forward(pair: StreamPair): void {
    const errorStream = pair.errorStream!,
      dataStream = pair.dataStream!;
    const fail = (reason: string) => {
      // As the kubelet: the message on the error stream, then both streams reset.
      send(
        writer.data(
          errorStream,
          Buffer.from(`error forwarding port ${pair.port} to pod ${pod.uid}, uid : ${reason}`),
          true,
        ),
      );
      send(writer.rstStream(dataStream, RstStreamStatus.Cancel));
      finish(pair);
    };
    const target = pod.target(pair.port);
    // The API server let the upgrade through only for a running pod: a port the kubelet did not
    // publish is one nobody in the pod listens on, refused as a real pod's would be.
    if (!target)
      return fail(
        `failed to connect to localhost:${pair.port} inside the pod: dial tcp4 127.0.0.1:${pair.port}: connect: connection refused`,
      );
    const upstream = connect(target);
    pod.opened?.(upstream);
    pair.upstream = upstream;
    let connected = false;
    upstream.on('connect', () => {
      connected = true;
    });
    upstream.on('data', (chunk: Buffer) => send(writer.data(dataStream, chunk)));
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      // Only a failed connect is reported (containerd's message); a connection the pod drops just ends.
      if (!connected)
        fail(
          `failed to connect to localhost:${pair.port} inside the pod: dial tcp4 ${target.host}:${target.port}: connect: ${describeErrno(error)}`,
        );
    });
    upstream.on('close', () => {
      if (pair.done) return;
      send(writer.data(dataStream, Buffer.alloc(0), true));
      send(writer.data(errorStream, Buffer.alloc(0), true));
      finish(pair);
    });
  }
}

/** Go's wording for the common connect errors. */
function describeErrno(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
      return 'no route to host';
    default:
      return error.message;
  }
}
