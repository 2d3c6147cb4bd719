// pods/exec on the simulated cluster, driven by client-node's Exec (a client written apart from
// kubectl; the kubectl suite drives the real binary): streams, exit status, the container's context.
import * as k8s from '@kubernetes/client-node';
// Not re-exported from the package index: the client's own channel numbers, to check ours against.
import { WebSocketHandler } from '@kubernetes/client-node/dist/web-socket-handler.js';
import { request } from 'node:https';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedChannel,
  decodeFrame,
  decodeTerminalSize,
  encodeFrame,
  StreamClose,
  StreamErr,
  StreamResize,
  StreamStdErr,
  StreamStdIn,
  StreamStdOut,
} from '../../cluster/sim/channel.ts';
import { repoRoot } from '../support/processes.ts';
import {
  isReady,
  labPod,
  simCA,
  simToken,
  startSimClient,
  terminatedState,
  watchPod,
  type SimClient,
} from '../support/sim.ts';

let c: SimClient;
let uid: string;
beforeAll(async () => {
  c = await startSimClient();
  const created = await c.core.createNamespacedPod({ namespace: 'default', body: labPod('shell') });
  uid = created.metadata!.uid!;
  const watch = await watchPod(c.kc, 'default', 'shell');
  await watch.waitFor(isReady, 'shell Ready');
  watch.stop();
});
afterAll(async () => {
  await c?.sim.stop();
});

interface ExecResult {
  stdout: string;
  stderr: string;
  status: k8s.V1Status;
}

function exec(pod: string, command: string[], stdin: string | null = null): Promise<ExecResult> {
  const stdout = new PassThrough(),
    stderr = new PassThrough();
  let out = '',
    err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk;
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk;
  });
  return new Promise((resolve, reject) => {
    new k8s.Exec(c.kc)
      .exec(
        'default',
        pod,
        'lab',
        command,
        stdout,
        stderr,
        stdin === null ? null : Readable.from([stdin]),
        false,
        (status) => resolve({ stdout: out, stderr: err, status }),
      )
      .catch(reject);
  });
}

describe('exec in a simulated container', () => {
  it('streams stdin, stdout and stderr and reports a non-zero exit code as the API server does', async () => {
    const result = await exec('shell', ['sh', '-c', 'cat; echo to-stderr >&2; exit 3'], 'from stdin\n');
    expect(result.stdout).toBe('from stdin\n');
    expect(result.stderr).toBe('to-stderr\n');
    expect(result.status).toEqual({
      metadata: {},
      status: 'Failure',
      reason: 'NonZeroExitCode',
      message:
        'command terminated with non-zero exit code: error executing command [sh -c cat; echo to-stderr >&2; exit 3], exit code 3',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });

  it('reports Success for exit 0', async () => {
    expect(await exec('shell', ['true'])).toEqual({
      stdout: '',
      stderr: '',
      status: { metadata: {}, status: 'Success' },
    });
  });

  it("runs in the container's working directory with its environment and address", async () => {
    // The address the container's own server listens on, from its log: exec must see the same one.
    const log = await c.core.readNamespacedPodLog({ name: 'shell', namespace: 'default' });
    const listening = JSON.parse(log.split('\n').find((line) => line.includes('"event":"listening"'))!) as {
      host: string;
    };
    const result = await exec('shell', ['sh', '-c', 'pwd; printf "%s %s %s\\n" "$POD_UID" "$HOST" "$LAB_MODE"']);
    expect(result.stdout).toBe(`${repoRoot.replace(/\/$/, '')}\n${uid} ${listening.host} graceful\n`);
  });

  it('refuses a command the image does not have with the runtime error', async () => {
    const result = await exec('shell', ['no-such-tool']);
    expect(result.status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
    expect(result.status.message).toContain('exec: "no-such-tool": executable file not found in $PATH');
  });

  it('ends an exec when its container is killed, as a real node does', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: labPod('short-lived', { grace: 1 }) });
    const watch = await watchPod(c.kc, 'default', 'short-lived');
    await watch.waitFor(isReady, 'short-lived Ready');
    const running = exec('short-lived', ['sleep', '600']);
    await c.core.deleteNamespacedPod({ name: 'short-lived', namespace: 'default' });
    const ended = await running;
    await watch.waitFor((e) => terminatedState(e) !== undefined, 'the container terminated');
    watch.stop();
    expect(ended.status).toMatchObject({
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '137' }] },
    });
  });
});

describe('clients that predate WebSocket streaming', () => {
  it('get a 400 Status naming what to use when they ask for SPDY', async () => {
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(`${c.sim.server}/api/v1/namespaces/default/pods/shell/exec?command=ls&stdout=true`, {
        method: 'POST',
        ca: simCA(c.sim),
        headers: {
          authorization: `Bearer ${simToken(c.sim)}`,
          connection: 'Upgrade',
          upgrade: 'SPDY/3.1',
          'x-stream-protocol-version': 'v4.channel.k8s.io',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
      });
      req.on('upgrade', () => reject(new Error('upgraded to SPDY')));
      req.on('error', reject);
      req.end();
    });
    expect(answer).toMatchObject({ status: 400, body: { kind: 'Status', code: 400, reason: 'BadRequest' } });
    expect(answer.body.message).toContain('serves exec over WebSocket only, not SPDY/3.1: use kubectl 1.31 or later');
  });
});

describe('the channel framing (remotecommand v4/v5)', () => {
  it("uses the channel numbers client-node's WebSocketHandler uses", () => {
    expect([StreamStdIn, StreamStdOut, StreamStdErr, StreamErr, StreamResize, StreamClose]).toEqual([
      WebSocketHandler.StdinStream,
      WebSocketHandler.StdoutStream,
      WebSocketHandler.StderrStream,
      WebSocketHandler.StatusStream,
      WebSocketHandler.ResizeStream,
      WebSocketHandler.CloseStream,
    ]);
  });

  it('frames a payload behind its channel byte and reads it back', () => {
    expect([...encodeFrame(StreamStdOut, 'hi')]).toEqual([1, 0x68, 0x69]);
    expect(decodeFrame(Buffer.from([2, 0x6f, 0x6b]))).toEqual({ channel: 2, payload: Buffer.from('ok') });
    expect(decodeFrame(Buffer.alloc(0))).toBeNull();
  });

  it("reads v5's close signal for stdin as client-go sends it ([255, 0])", () => {
    expect(closedChannel(decodeFrame(Buffer.from([StreamClose, StreamStdIn]))!)).toBe(StreamStdIn);
    expect(closedChannel(decodeFrame(Buffer.from([StreamStdIn, 0]))!)).toBeNull();
  });

  it('reads a terminal size and rejects a malformed one', () => {
    expect(decodeTerminalSize(Buffer.from('{"Width":120,"Height":40}'))).toEqual({ width: 120, height: 40 });
    expect(decodeTerminalSize(Buffer.from('{"Width":0,"Height":40}'))).toBeNull();
    expect(decodeTerminalSize(Buffer.from('not json'))).toBeNull();
  });
});
