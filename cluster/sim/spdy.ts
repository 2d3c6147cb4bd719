// SPDY/3.1 framing, as much as kubectl's port-forward tunnel needs, after moby/spdystream's spdy
// package (which client-go uses) and draft-mbelshe-httpbis-spdy-00. No maintained npm library frames
// SPDY on Node 20 (spdy-transport's last release was in 2018), so the framing lives here, in one
// module with its own tests against frames recorded from spdystream's framer.
import { constants as zlib, deflateRawSync, deflateSync, inflateSync } from 'node:zlib';

const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
const CONTROL_BIT = 0x8000;
const STREAM_ID_MASK = 0x7fffffff;
const LENGTH_MASK = 0xffffff;
const FRAME_HEADER_BYTES = 8;
/** Compressed header bytes a connection may send in all; the sim's clients send a few hundred. */
const MAX_HEADER_HISTORY_BYTES = 1 << 20;

const ControlFrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;
export const RstStreamStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  Cancel: 5,
  InternalError: 6,
} as const;
export const GoAwayStatus = { OK: 0, ProtocolError: 1, InternalError: 2 } as const;

/** Header names (lowercase, as SPDY sends them) to their values. */
export type SpdyHeaders = Record<string, string[]>;

export type SpdyFrame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | {
      kind: 'synStream';
      streamId: number;
      associatedToStreamId: number;
      priority: number;
      flags: number;
      headers: SpdyHeaders;
    }
  | { kind: 'synReply' | 'headers'; streamId: number; flags: number; headers: SpdyHeaders }
  | { kind: 'rstStream'; streamId: number; status: number }
  | { kind: 'ping'; id: number }
  | { kind: 'goAway'; lastGoodStreamId: number; status: number }
  | { kind: 'windowUpdate'; streamId: number; delta: number }
  | { kind: 'other'; type: number; flags: number; payload: Buffer };

export class SpdyProtocolError extends Error {}

/** The SPDY/3 header compression dictionary (draft section 2.6.10.1): length-prefixed words, then text. */
export const HEADER_DICTIONARY: Buffer = (() => {
  const words = [
    'options',
    'head',
    'post',
    'put',
    'delete',
    'trace',
    'accept',
    'accept-charset',
    'accept-encoding',
    'accept-language',
    'accept-ranges',
    'age',
    'allow',
    'authorization',
    'cache-control',
    'connection',
    'content-base',
    'content-encoding',
    'content-language',
    'content-length',
    'content-location',
    'content-md5',
    'content-range',
    'content-type',
    'date',
    'etag',
    'expect',
    'expires',
    'from',
    'host',
    'if-match',
    'if-modified-since',
    'if-none-match',
    'if-range',
    'if-unmodified-since',
    'last-modified',
    'location',
    'max-forwards',
    'pragma',
    'proxy-authenticate',
    'proxy-authorization',
    'range',
    'referer',
    'retry-after',
    'server',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
    'user-agent',
    'vary',
    'via',
    'warning',
    'www-authenticate',
    'method',
    'get',
    'status',
    '200 OK',
    'version',
    'HTTP/1.1',
    'url',
    'public',
    'set-cookie',
    'keep-alive',
    'origin',
  ];
  const tail =
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
    '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
    'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
    'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
    'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
  return Buffer.concat([...words.map((word) => lengthPrefixed(Buffer.from(word))), Buffer.from(tail, 'latin1')]);
})();

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length);
  return Buffer.concat([
    count,
    ...entries.flatMap(([name, values]) => [
      lengthPrefixed(Buffer.from(name.toLowerCase())),
      lengthPrefixed(Buffer.from(values.join('\0'))),
    ]),
  ]);
}

function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  let offset = 0;
  const take = () => {
    if (offset + 4 > block.length) throw new SpdyProtocolError('header block ends early');
    const length = block.readUInt32BE(offset);
    if (offset + 4 + length > block.length) throw new SpdyProtocolError('header block ends early');
    const bytes = block.subarray(offset + 4, offset + 4 + length);
    offset += 4 + length;
    return bytes.toString('utf8');
  };
  if (block.length < 4) throw new SpdyProtocolError('header block ends early');
  const count = block.readUInt32BE(0);
  offset = 4;
  const headers: SpdyHeaders = {};
  for (let i = 0; i < count; i++) {
    const name = take().toLowerCase();
    (headers[name] ??= []).push(...take().split('\0'));
  }
  return headers;
}

/**
 * Header blocks of one direction form a single zlib stream with the SPDY dictionary, flushed after
 * each block. Node's zlib has no synchronous streaming inflate, so each block is read by inflating
 * the connection's history again and keeping the new part (the history is small and capped).
 */
class HeaderInflater {
  private history: Buffer = Buffer.alloc(0);
  private inflatedBytes = 0;

  next(compressed: Buffer): Buffer {
    this.history = Buffer.concat([this.history, compressed]);
    if (this.history.length > MAX_HEADER_HISTORY_BYTES)
      throw new SpdyProtocolError('too many header bytes on one connection');
    let inflated: Buffer;
    try {
      inflated = inflateSync(this.history, { dictionary: HEADER_DICTIONARY, finishFlush: zlib.Z_SYNC_FLUSH });
    } catch (error) {
      throw new SpdyProtocolError(`header block does not decompress: ${(error as Error).message}`);
    }
    const block = inflated.subarray(this.inflatedBytes);
    this.inflatedBytes = inflated.length;
    return block;
  }
}

/**
 * Header compression for what the sim sends: stored (level 0) deflate blocks, each ended by a sync
 * flush. Stored blocks refer to nothing before them, so each is made on its own and the peer reads
 * them as one continuing stream; only the first carries the zlib header naming the dictionary.
 */
class HeaderDeflater {
  private started = false;

  next(block: Buffer): Buffer {
    const options = { level: 0, finishFlush: zlib.Z_SYNC_FLUSH };
    if (this.started) return deflateRawSync(block, options);
    this.started = true;
    return deflateSync(block, { ...options, dictionary: HEADER_DICTIONARY });
  }
}

/** Reads frames from a byte stream that may split or join them anywhere. */
export class SpdyFrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly inflater = new HeaderInflater();

  push(chunk: Buffer): SpdyFrame[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const frames: SpdyFrame[] = [];
    while (this.buffered.length >= FRAME_HEADER_BYTES) {
      const length = this.buffered.readUInt32BE(4) & LENGTH_MASK;
      if (this.buffered.length < FRAME_HEADER_BYTES + length) break;
      const frame = this.buffered.subarray(0, FRAME_HEADER_BYTES + length);
      this.buffered = this.buffered.subarray(FRAME_HEADER_BYTES + length);
      frames.push(this.decode(frame));
    }
    return frames;
  }

  private decode(frame: Buffer): SpdyFrame {
    const first = frame.readUInt32BE(0);
    const flags = frame[4]!;
    const payload = frame.subarray(FRAME_HEADER_BYTES);
    if (!(first & 0x80000000)) {
      const streamId = first & STREAM_ID_MASK;
      if (streamId === 0) throw new SpdyProtocolError('data frame on stream 0');
      return { kind: 'data', streamId, flags, data: payload };
    }
    const version = (first >>> 16) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
    const type = first & 0xffff;
    const need = (bytes: number) => {
      if (payload.length < bytes) throw new SpdyProtocolError(`control frame ${type} is too short`);
    };
    switch (type) {
      case ControlFrameType.SynStream:
        need(10);
        return {
          kind: 'synStream',
          streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
          associatedToStreamId: payload.readUInt32BE(4) & STREAM_ID_MASK,
          priority: payload[8]! >> 5,
          flags,
          headers: decodeHeaderBlock(this.inflater.next(payload.subarray(10))),
        };
      case ControlFrameType.SynReply:
      case ControlFrameType.Headers:
        need(4);
        return {
          kind: type === ControlFrameType.SynReply ? 'synReply' : 'headers',
          streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
          flags,
          headers: decodeHeaderBlock(this.inflater.next(payload.subarray(4))),
        };
      case ControlFrameType.RstStream:
        need(8);
        return {
          kind: 'rstStream',
          streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
          status: payload.readUInt32BE(4),
        };
      case ControlFrameType.Ping:
        need(4);
        return { kind: 'ping', id: payload.readUInt32BE(0) };
      case ControlFrameType.GoAway:
        need(8);
        return {
          kind: 'goAway',
          lastGoodStreamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
          status: payload.readUInt32BE(4),
        };
      case ControlFrameType.WindowUpdate:
        need(8);
        return {
          kind: 'windowUpdate',
          streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
          delta: payload.readUInt32BE(4) & STREAM_ID_MASK,
        };
      default:
        return { kind: 'other', type, flags, payload };
    }
  }
}

/** Writes frames; header blocks share the connection's compression stream, so keep one per connection. */
export class SpdyFrameWriter {
  private readonly deflater = new HeaderDeflater();

  private control(type: number, flags: number, payload: Buffer): Buffer {
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt16BE(CONTROL_BIT | SPDY_VERSION, 0);
    header.writeUInt16BE(type, 2);
    header.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
    return Buffer.concat([header, payload]);
  }

  private words(...values: number[]): Buffer {
    const payload = Buffer.alloc(4 * values.length);
    for (const [i, value] of values.entries()) payload.writeUInt32BE(value >>> 0, 4 * i);
    return payload;
  }

  /** A client's SYN_STREAM (the sim only answers streams; tests open them). */
  synStream(streamId: number, headers: SpdyHeaders, fin = false): Buffer {
    const ids = this.words(streamId, 0);
    const priorityAndSlot = Buffer.alloc(2);
    return this.control(
      ControlFrameType.SynStream,
      fin ? FLAG_FIN : 0,
      Buffer.concat([ids, priorityAndSlot, this.deflater.next(encodeHeaderBlock(headers))]),
    );
  }

  synReply(streamId: number, headers: SpdyHeaders = {}, fin = false): Buffer {
    return this.control(
      ControlFrameType.SynReply,
      fin ? FLAG_FIN : 0,
      Buffer.concat([this.words(streamId), this.deflater.next(encodeHeaderBlock(headers))]),
    );
  }

  data(streamId: number, data: Buffer, fin = false): Buffer {
    if (data.length > LENGTH_MASK) throw new RangeError('a data frame holds at most 16 MiB - 1');
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
    header.writeUInt32BE((((fin ? FLAG_FIN : 0) << 24) | data.length) >>> 0, 4);
    return Buffer.concat([header, data]);
  }

  rstStream(streamId: number, status: number): Buffer {
    return this.control(ControlFrameType.RstStream, 0, this.words(streamId, status));
  }

  ping(id: number): Buffer {
    return this.control(ControlFrameType.Ping, 0, this.words(id));
  }

  goAway(lastGoodStreamId: number, status: number): Buffer {
    return this.control(ControlFrameType.GoAway, 0, this.words(lastGoodStreamId, status));
  }
}
