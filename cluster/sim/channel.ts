// The channel framing of Kubernetes' WebSocket streams (apimachinery wsstream; remotecommand
// v4/v5 for exec; client-node's port-forward): every binary message is one channel byte, then the
// payload. v5 adds a close signal: a message on channel 255 whose payload is the channel to close.
import { z } from 'zod';
export const StreamStdIn = 0;
export const StreamStdOut = 1;
export const StreamStdErr = 2;
export const StreamErr = 3;
export const StreamResize = 4;
export const StreamClose = 255;

const StreamProtocolV4Name = 'v4.channel.k8s.io';
export const StreamProtocolV5Name = 'v5.channel.k8s.io';
/** What the sim speaks for exec, best first; v5 is what kubectl ≥1.30 asks for. */
export const REMOTE_COMMAND_PROTOCOLS = [StreamProtocolV5Name, StreamProtocolV4Name];

export function encodeFrame(channel: number, payload: Uint8Array | string = new Uint8Array()): Buffer {
  return Buffer.concat([Buffer.from([channel]), typeof payload === 'string' ? Buffer.from(payload) : payload]);
}

export type Frame = { channel: number; payload: Buffer };

/** One message into its channel and payload; null for an empty message (no channel byte). */
export function decodeFrame(message: Buffer): Frame | null {
  if (message.length === 0) return null;
  return { channel: message[0]!, payload: message.subarray(1) };
}

/** v5's close signal names the channel the peer will not write to again. */
export function closedChannel(frame: Frame): number | null {
  return frame.channel === StreamClose && frame.payload.length === 1 ? frame.payload[0]! : null;
}

const MAX_TERMINAL_SIDE = 0xffff;
const TerminalSizeSchema = z.object({
  Width: z.int().min(1).max(MAX_TERMINAL_SIDE),
  Height: z.int().min(1).max(MAX_TERMINAL_SIDE),
});

/** A resize message: the terminal size as JSON {"Width":…,"Height":…} (remotecommand.TerminalSize); null when malformed. */
export function decodeTerminalSize(payload: Buffer): { width: number; height: number } | null {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  const size = TerminalSizeSchema.safeParse(json);
  return size.success ? { width: size.data.Width, height: size.data.Height } : null;
}
