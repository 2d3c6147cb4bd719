// SPDY/3.1 framing (cluster/sim/spdy.ts) against frames recorded from moby/spdystream v0.5.0's
// spdy.Framer, the framer client-go's port-forward uses: what kubectl sends is read, and what the
// sim writes was fed back to that Framer's ReadFrame, which read every frame (headers included).
import { describe, expect, it } from 'vitest';
import { HEADER_DICTIONARY, SpdyFrameReader, SpdyFrameWriter, SpdyProtocolError } from '../../cluster/sim/spdy.ts';

/** Written by spdystream's Framer in this order (one connection, so header compression carries over). */
const FROM_CLIENT = {
  synStreamError:
    '800300010000003e0000000100000000000078f9e3c6a7c202253a703a2b294a4dcc851625aca9a0808614cb45e01c60616061c0c0c0c0590489c64c50f2663400000000ffff',
  synStreamData: '800300010000001c00000003000000000000826ac61445350e543225a29b06000000ffff',
  dataFin: '0000000101000000',
  data: '0000000300000016474554202f776f726b20485454502f312e310d0a0d0a',
  ping: '800300060000000400000001',
  rstCancel: '80030003000000080000000300000005',
  goAway: '80030007000000080000000300000000',
};
const EXPECTED_FROM_CLIENT = [
  {
    kind: 'synStream',
    streamId: 1,
    associatedToStreamId: 0,
    priority: 0,
    flags: 0,
    headers: { streamtype: ['error'], port: ['8080'], requestid: ['0'] },
  },
  {
    kind: 'synStream',
    streamId: 3,
    associatedToStreamId: 0,
    priority: 0,
    flags: 0,
    headers: { streamtype: ['data'], port: ['8080'], requestid: ['0'] },
  },
  { kind: 'data', streamId: 1, flags: 1, data: Buffer.alloc(0) },
  { kind: 'data', streamId: 3, flags: 0, data: Buffer.from('GET /work HTTP/1.1\r\n\r\n') },
  { kind: 'ping', id: 1 },
  { kind: 'rstStream', streamId: 3, status: 5 },
  { kind: 'goAway', lastGoodStreamId: 3, status: 0 },
];

/**
 * The writer's output for: SYN_REPLY 1, SYN_REPLY 3, DATA 3 "HTTP/1.1 200 OK\r\n", DATA 1 FIN,
 * PING 1, RST_STREAM 3 CANCEL, SYN_REPLY 5 {a: b}. spdystream's ReadFrame read all seven.
 */
const ACCEPTED_BY_SPDYSTREAM =
  '800300020000001800000001783fe3c6a7c2000400fbff00000000000000ffff800300020000001200000003000400fbff00000000000000ffff' +
  '0000000300000011485454502f312e3120323030204f4b0d0a0000000101000000800300060000000400000001800300030000000800000003000000058003' +
  '00020000001c00000005000e00f1ff0000000100000001610000000162000000ffff';

const hex = (text: string) => Buffer.from(text, 'hex');

function adler32(bytes: Buffer): number {
  let a = 1,
    b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

describe('SPDY/3.1 framing', () => {
  it('has the dictionary spdystream compresses with: 1423 bytes, the Adler-32 its zlib header names', () => {
    expect(HEADER_DICTIONARY.length).toBe(1423);
    // Bytes 2-5 of the first header block after the zlib method byte pair: the dictionary's id.
    const zlibHeader = hex(FROM_CLIENT.synStreamError).subarray(18, 24);
    expect(zlibHeader.readUInt32BE(2)).toBe(adler32(HEADER_DICTIONARY));
  });

  it("reads kubectl's frames, header compression carried from one block to the next", () => {
    const reader = new SpdyFrameReader();
    expect(Object.values(FROM_CLIENT).flatMap((frame) => reader.push(hex(frame)))).toEqual(EXPECTED_FROM_CLIENT);
  });

  it('reads frames split and joined anywhere in the byte stream, as WebSocket messages may carry them', () => {
    const reader = new SpdyFrameReader();
    const stream = hex(Object.values(FROM_CLIENT).join(''));
    const frames = [];
    for (let offset = 0; offset < stream.length; offset += 5)
      frames.push(...reader.push(stream.subarray(offset, offset + 5)));
    expect(frames).toEqual(EXPECTED_FROM_CLIENT);
  });

  it('writes what spdystream reads, and reads it back itself', () => {
    const writer = new SpdyFrameWriter();
    const written = Buffer.concat([
      writer.synReply(1),
      writer.synReply(3),
      writer.data(3, Buffer.from('HTTP/1.1 200 OK\r\n')),
      writer.data(1, Buffer.alloc(0), true),
      writer.ping(1),
      writer.rstStream(3, 5),
      writer.synReply(5, { a: ['b'] }),
    ]);
    expect(written.toString('hex')).toBe(ACCEPTED_BY_SPDYSTREAM);
    expect(new SpdyFrameReader().push(written)).toEqual([
      { kind: 'synReply', streamId: 1, flags: 0, headers: {} },
      { kind: 'synReply', streamId: 3, flags: 0, headers: {} },
      { kind: 'data', streamId: 3, flags: 0, data: Buffer.from('HTTP/1.1 200 OK\r\n') },
      { kind: 'data', streamId: 1, flags: 1, data: Buffer.alloc(0) },
      { kind: 'ping', id: 1 },
      { kind: 'rstStream', streamId: 3, status: 5 },
      { kind: 'synReply', streamId: 5, flags: 0, headers: { a: ['b'] } },
    ]);
  });

  it('refuses another version, a header block that does not decompress, and one cut short', () => {
    expect(() => new SpdyFrameReader().push(hex('800200060000000400000001'))).toThrow(SpdyProtocolError);
    expect(() => new SpdyFrameReader().push(hex('800300020000000800000001deadbeef'))).toThrow(/does not decompress/);
    // A SYN_REPLY with no header block at all.
    expect(() => new SpdyFrameReader().push(hex('8003000200000004000000ff'))).toThrow(/header block ends early/);
    // Part of a frame is kept until the rest comes, not misread.
    const reader = new SpdyFrameReader();
    const frame = new SpdyFrameWriter().synReply(1, { a: ['b'] });
    expect(reader.push(frame.subarray(0, 12))).toEqual([]);
    expect(reader.push(frame.subarray(12))).toEqual([
      { kind: 'synReply', streamId: 1, flags: 0, headers: { a: ['b'] } },
    ]);
  });
});
