// pods/portforward through kubectl's tunnel (SPDY/3.1 in WebSocket messages) without kubectl, so it
// is tested where the installed kubectl is too old to speak it; the kubectl suite drives the real one.
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_FIN, SpdyFrameReader, SpdyFrameWriter, type SpdyFrame } from '../../cluster/sim/spdy.ts';
import { isReady, labPod, simCA, simToken, startSimClient, watchPod, type SimClient } from '../support/sim.ts';

let c: SimClient;
let uid: string;
beforeAll(async () => {
  c = await startSimClient();
  uid = (await c.core.createNamespacedPod({ namespace: 'default', body: labPod('tunnelled') })).metadata!.uid!;
  const watch = await watchPod(c.kc, 'default', 'tunnelled');
  await watch.waitFor(isReady, 'tunnelled Ready');
  watch.stop();
});
afterAll(async () => {
  await c?.sim.stop();
});

const WS_BINARY = 0x82;
const WS_CLOSE = 0x88;
const WS_SHORT_LENGTH = 126;

/**
 * The smallest WebSocket client that offers kubectl's protocol name (ws and undici refuse the '/'
 * in it): masked binary frames out; unmasked frames in, their payloads as one byte stream.
 */
async function openTunnel(path: string) {
  const socket = await new Promise<Duplex>((resolve, reject) => {
    const req = request(`${c.sim.server}${path}`, {
      ca: simCA(c.sim),
      headers: {
        authorization: `Bearer ${simToken(c.sim)}`,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        'sec-websocket-protocol': 'SPDY/3.1+portforward.k8s.io',
      },
    });
    req.on('upgrade', (res, upgraded) => {
      expect(res.headers['sec-websocket-protocol']).toBe('SPDY/3.1+portforward.k8s.io');
      resolve(upgraded);
    });
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
  const reader = new SpdyFrameReader();
  const frames: SpdyFrame[] = [];
  const waiters = new Set<() => void>();
  let pending = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      let length = pending[1]! & 0x7f,
        offset = 2;
      if (length === WS_SHORT_LENGTH) {
        if (pending.length < 4) return;
        length = pending.readUInt16BE(2);
        offset = 4;
      }
      if (pending.length < offset + length) return;
      const [opcode, payload] = [pending[0]!, pending.subarray(offset, offset + length)];
      pending = pending.subarray(offset + length);
      if (opcode === WS_BINARY) frames.push(...reader.push(payload));
      if (opcode === WS_CLOSE) closed = true;
    }
    for (const wake of waiters) wake();
  });
  socket.on('close', () => {
    closed = true;
    for (const wake of waiters) wake();
  });
  const send = (message: Buffer) => {
    const mask = randomBytes(4);
    const masked = Buffer.from(message.map((byte, i) => byte ^ mask[i % 4]!));
    const header =
      message.length < WS_SHORT_LENGTH
        ? Buffer.from([WS_BINARY, 0x80 | message.length])
        : Buffer.from([WS_BINARY, 0x80 | WS_SHORT_LENGTH, message.length >> 8, message.length & 0xff]);
    socket.write(Buffer.concat([header, mask, masked]));
  };
  const waitFor = (match: (frames: SpdyFrame[]) => boolean, what: string) =>
    new Promise<SpdyFrame[]>((resolve, reject) => {
      const check = () => {
        if (match(frames)) {
          waiters.delete(check);
          resolve(frames);
        } else if (closed) {
          waiters.delete(check);
          reject(new Error(`the tunnel closed before ${what}: ${JSON.stringify(frames)}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { send, waitFor, frames, close: () => socket.destroy() };
}

const streamText = (frames: SpdyFrame[], streamId: number) =>
  Buffer.concat(frames.flatMap((f) => (f.kind === 'data' && f.streamId === streamId ? [f.data] : []))).toString();
const finished = (frames: SpdyFrame[], streamId: number) =>
  frames.some((f) => f.kind === 'data' && f.streamId === streamId && (f.flags & FLAG_FIN) !== 0);

describe("port-forward through kubectl's SPDY tunnel", () => {
  it('answers both streams, carries a request to the pod and back, echoes pings, and closes both streams after', async () => {
    const tunnel = await openTunnel('/api/v1/namespaces/default/pods/tunnelled/portforward');
    const client = new SpdyFrameWriter();
    tunnel.send(client.synStream(1, { streamtype: ['error'], port: ['8080'], requestid: ['0'] }));
    tunnel.send(client.data(1, Buffer.alloc(0), true));
    tunnel.send(client.synStream(3, { streamtype: ['data'], port: ['8080'], requestid: ['0'] }));
    tunnel.send(client.ping(1));
    tunnel.send(client.data(3, Buffer.from('GET /readyz HTTP/1.1\r\nhost: pod\r\nconnection: close\r\n\r\n')));
    const frames = await tunnel.waitFor((f) => finished(f, 1) && finished(f, 3), 'both streams finished');
    expect(frames.filter((f) => f.kind === 'synReply').map((f) => f.kind === 'synReply' && f.streamId)).toEqual([1, 3]);
    expect(frames).toContainEqual({ kind: 'ping', id: 1 });
    expect(streamText(frames, 3)).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\{"ready":true\}/);
    expect(streamText(frames, 1)).toBe('');
    tunnel.close();
  });

  it('reports a refused port on the error stream as the kubelet does, and resets the data stream', async () => {
    const tunnel = await openTunnel('/api/v1/namespaces/default/pods/tunnelled/portforward');
    const client = new SpdyFrameWriter();
    tunnel.send(client.synStream(1, { streamtype: ['error'], port: ['9999'], requestid: ['7'] }));
    tunnel.send(client.synStream(3, { streamtype: ['data'], port: ['9999'], requestid: ['7'] }));
    const frames = await tunnel.waitFor((f) => finished(f, 1), 'the error stream finished');
    expect(streamText(frames, 1)).toMatch(
      new RegExp(
        `^error forwarding port 9999 to pod ${uid}, uid : failed to connect to localhost:9999 inside the pod: dial tcp4 \\S+:9999: connect: connection refused$`,
      ),
    );
    await tunnel.waitFor((f) => f.some((x) => x.kind === 'rstStream' && x.streamId === 3), 'the data stream reset');
    tunnel.close();
  });

  it('refuses a stream without a port and closes the tunnel on a frame it cannot read', async () => {
    const tunnel = await openTunnel('/api/v1/namespaces/default/pods/tunnelled/portforward');
    const client = new SpdyFrameWriter();
    tunnel.send(client.synStream(1, { streamtype: ['error'] }));
    await tunnel.waitFor(
      (f) => f.some((x) => x.kind === 'rstStream' && x.streamId === 1 && x.status === 3),
      'RST_STREAM REFUSED_STREAM',
    );
    tunnel.send(Buffer.from('80020001000000040000000f', 'hex'));
    await expect(tunnel.waitFor(() => false, 'never')).rejects.toThrow(
      /"kind":"goAway","lastGoodStreamId":1,"status":1/,
    );
  });
});
