// pods/exec over WebSocket, served as the API server and kubelet serve it to kubectl ≥1.30
// (remotecommand v5, and v4): stdin, stdout and stderr on channels 0-2; the outcome as a
// metav1.Status on channel 3 (Success, or NonZeroExitCode with the code as an ExitCode cause);
// terminal sizes on channel 4; with v5, the close signal that ends stdin.
import { execFile } from 'node:child_process';
import { readFile, readlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { constants } from 'node:os';
import type { Duplex } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  closedChannel,
  decodeFrame,
  decodeTerminalSize,
  encodeFrame,
  REMOTE_COMMAND_PROTOCOLS,
  StreamErr,
  StreamProtocolV5Name,
  StreamResize,
  StreamStdErr,
  StreamStdIn,
  StreamStdOut,
} from './channel.ts';
import { spawnInContainer, type ContainerContext } from './exec.ts';
import type { ContainerProcess } from './runtime.ts';
import { badRequest } from './status.ts';

const WEBSOCKET_NORMAL_CLOSURE = 1000;
const HTTP_INTERNAL_ERROR = 500;
/** How long a terminal session waits for the client's first size before starting at the default one. */
const FIRST_RESIZE_WAIT_MS = 1000;
/** Death by signal N is reported as exit code 128 + N, as by the runtime. */
const SIGNAL_EXIT_BASE = 128;

export interface ExecOptions {
  command: string[];
  container: string | null;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The exec request's query, as the API server validates it. */
export function parseExecOptions(url: URL): ExecOptions {
  const flag = (name: string) => ['true', '1'].includes(url.searchParams.get(name) ?? '');
  const command = url.searchParams.getAll('command');
  if (command.length === 0) throw badRequest('you must specify at least 1 command');
  const options = {
    command,
    container: url.searchParams.get('container'),
    stdin: flag('stdin'),
    stdout: flag('stdout'),
    stderr: flag('stderr'),
    tty: flag('tty'),
  };
  if (!options.stdin && !options.stdout && !options.stderr)
    throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  // With a terminal, stderr is merged into stdout by the pty.
  if (options.tty) options.stderr = false;
  return options;
}

/** The statuses the kubelet writes on the error channel (remotecommand ServeExec). */
const execStatus = {
  success: () => ({ metadata: {}, status: 'Success' }),
  nonZeroExit: (command: string[], code: number) => ({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  }),
  internalError: (message: string) => ({
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: error executing command in container: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message: `error executing command in container: ${message}` }] },
    code: HTTP_INTERNAL_ERROR,
  }),
};

export type RunningContainer = ContainerContext & { process: ContainerProcess };

export function createRemoteCommandServer() {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => REMOTE_COMMAND_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  function handleUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    container: RunningContainer,
    options: ExecOptions,
  ): void {
    wss.handleUpgrade(req, socket, head, (ws) => serveExec(ws, container, options));
  }

  return {
    handleUpgrade,
    close: () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

function serveExec(ws: WebSocket, container: RunningContainer, options: ExecOptions): void {
  const send = (channel: number, payload?: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(encodeFrame(channel, payload));
  };
  let finished = false;
  const finish = (status: object) => {
    if (finished) return;
    finished = true;
    send(StreamErr, JSON.stringify(status));
    ws.close(WEBSOCKET_NORMAL_CLOSURE);
  };
  // The kubelet's first write tells the client the streams are up.
  send(options.stdout ? StreamStdOut : options.stderr ? StreamStdErr : StreamErr);

  let child: ChildProcess | null = null;
  let terminal: TerminalSize | null = null;
  const start = (terminalSize: { width: number; height: number } | null) => {
    if (child || finished || ws.readyState !== ws.OPEN) return;
    try {
      child = spawnInContainer(container, options.command, {
        stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        tty: options.tty,
        terminalSize,
        detached: true,
      });
    } catch (error) {
      return finish(execStatus.internalError((error as Error).message));
    }
    const started = child;
    terminal = options.tty ? new TerminalSize(started) : null;
    started.stdout!.on('data', (chunk: Buffer) => {
      if (options.stdout) send(StreamStdOut, chunk);
      terminal?.applyPending();
    });
    started.stderr!.on('data', (chunk: Buffer) => {
      if (options.stderr) send(StreamStdErr, chunk);
    });
    started.stdin?.on('error', () => {});
    started.on('error', (error) => finish(execStatus.internalError(error.message)));
    started.on('close', (code, signal) => {
      const exitCode = code ?? SIGNAL_EXIT_BASE + (signal ? constants.signals[signal] : 0);
      finish(exitCode === 0 ? execStatus.success() : execStatus.nonZeroExit(options.command, exitCode));
    });
  };
  // A terminal client sends its size first, and the runtime sizes the pty before the command runs;
  // a client that sends no size gets the default one.
  const waitForSize = options.tty ? setTimeout(() => start(null), FIRST_RESIZE_WAIT_MS) : undefined;
  if (!options.tty) start(null);

  const v5 = ws.protocol === StreamProtocolV5Name;
  ws.on('message', (data: Buffer) => {
    const frame = decodeFrame(data);
    if (!frame) return;
    if (!child) {
      clearTimeout(waitForSize);
      const isResize = frame.channel === StreamResize;
      start(isResize ? decodeTerminalSize(frame.payload) : null);
      if (isResize) return;
    }
    if (frame.channel === StreamStdIn) child?.stdin?.write(frame.payload);
    else if (frame.channel === StreamResize) terminal?.resize(frame.payload);
    else if (v5 && closedChannel(frame) === StreamStdIn) child?.stdin?.end();
  });
  // A process in a container dies with it; one whose client went away is stopped too.
  const stop = () => {
    clearTimeout(waitForSize);
    const running = child;
    if (running?.pid !== undefined && running.exitCode === null && running.signalCode === null) {
      try {
        process.kill(-running.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  ws.on('close', stop);
  void container.process.exited.then(stop);
}

/**
 * Terminal resizes for a command run under `script`: the size is set on the pty of script's child
 * with stty (which signals SIGWINCH). A size that comes before the child exists waits for its output.
 */
class TerminalSize {
  private pending: { width: number; height: number } | null = null;
  private readonly script: ChildProcess;
  constructor(script: ChildProcess) {
    this.script = script;
  }

  resize(payload: Buffer): void {
    this.pending = decodeTerminalSize(payload) ?? this.pending;
    this.applyPending();
  }

  applyPending(): void {
    const size = this.pending;
    if (!size || this.script.pid === undefined) return;
    void this.ptyOfChild(this.script.pid).then((pty) => {
      if (!pty || this.pending !== size) return;
      this.pending = null;
      execFile('stty', ['-F', pty, 'rows', String(size.height), 'cols', String(size.width)], () => {});
    });
  }

  private async ptyOfChild(pid: number): Promise<string | null> {
    try {
      const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8'))
        .trim()
        .split(/\s+/)
        .filter(Boolean);
      if (children.length === 0) return null;
      const pty = await readlink(`/proc/${children[0]}/fd/0`);
      return pty.startsWith('/dev/pts/') ? pty : null;
    } catch {
      return null;
    }
  }
}
