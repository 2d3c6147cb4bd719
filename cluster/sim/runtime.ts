// The sim's container runtime: images map to local programs, each container is a real child
// process, and its stdout/stderr become the container log.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as fs, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { wallNow } from './time.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = [process.execPath, '--import', 'tsx'];

export interface ImageEntry {
  /** What the image runs when the spec gives no command (its ENTRYPOINT). */
  entrypoint: string[];
  /** Paths inside the image that exec hooks may name, mapped to local commands. */
  paths: Record<string, string[]>;
  env: Record<string, string>;
}

/** Image repository (tag ignored) -> local programs. */
export type ImageMap = Record<string, ImageEntry>;

const labHook = [...TSX, `${REPO_ROOT}server/hook.ts`];
export const DEFAULT_IMAGES: ImageMap = {
  'termlab/lab-server': {
    entrypoint: [...TSX, `${REPO_ROOT}server/main.ts`],
    paths: { '/usr/local/bin/lab-hook': labHook, 'lab-hook': labHook, sleep: ['/bin/sleep'], '/bin/sleep': ['/bin/sleep'] },
    env: { LAB_MODE: 'graceful', PORT: '8080' },
  },
};

export function imageRepository(image: string): string {
  // Drop a digest, then a tag (a colon after the last slash), then docker.io/ and library/ prefixes.
  const noDigest = image.split('@')[0]!;
  const lastSlash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  const repo = colon > lastSlash ? noDigest.slice(0, colon) : noDigest;
  return repo.replace(/^docker\.io\//, '').replace(/^library\//, '');
}

export interface LogLine {
  wallMs: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

const LOG_LIMIT = 20_000;

export class ContainerProcess {
  readonly lines: LogLine[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<{ exitCode: number; signal: NodeJS.Signals | null; wallMs: number }>;
  private readonly listeners = new Set<(line: LogLine | null) => void>();
  private ended = false;
  private exitedFlag = false;

  constructor(argv: string[], env: Record<string, string>) {
    // stdout is a real FIFO, not Node's socketpair, so an exec hook can open /proc/<pid>/fd/1
    // and write into the container's log the way it would inside a container.
    const dir = mkdtempSync(join(tmpdir(), 'termlab-sim-'));
    const fifo = join(dir, 'stdout');
    execFileSync('mkfifo', ['-m', '0600', fifo]);
    const readFd = openSync(fifo, fs.O_RDONLY | fs.O_NONBLOCK);
    const writeFd = openSync(fifo, fs.O_WRONLY);
    try {
      this.child = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, env, stdio: ['ignore', writeFd, 'pipe'] });
    } finally {
      closeSync(writeFd);
    }
    const stdout = new Socket({ fd: readFd, readable: true, writable: false });
    stdout.on('error', (error) => this.append({ wallMs: wallNow(), stream: 'stderr', text: `runtime: container stdout: ${error.message}` }));
    const streams: [LogLine['stream'], Readable][] = [['stdout', stdout], ['stderr', this.child.stderr!]];
    let openStreams = streams.length;
    const streamsClosed = new Promise<void>((resolve) => {
      for (const [stream, input] of streams) {
        createInterface({ input }).on('line', (text) => this.append({ wallMs: wallNow(), stream, text }))
          .on('close', () => { if (--openStreams === 0) resolve(); });
      }
    });
    void streamsClosed.then(() => rmSync(dir, { recursive: true, force: true }));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitedFlag = true;
        // 128 + N for death by signal N, as the runtime reports it.
        resolve({ exitCode: code ?? 128 + (signal ? constants.signals[signal] : 0), signal, wallMs: wallNow() });
        // The log ends when its pipes close; a hook may still hold stdout open through /proc,
        // so do not wait on it for long.
        void Promise.race([streamsClosed, new Promise((r) => setTimeout(r, 200))]).then(() => {
          if (openStreams > 0) stdout.destroy();
          this.ended = true;
          for (const listener of this.listeners) listener(null);
        });
      });
      this.child.on('error', (error) => {
        this.append({ wallMs: wallNow(), stream: 'stderr', text: `runtime: ${error.message}` });
      });
    });
  }

  get hasExited(): boolean {
    return this.exitedFlag;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The log has ended: the process exited and its output is all in. */
  get hasEnded(): boolean {
    return this.ended;
  }

  private append(line: LogLine): void {
    this.lines.push(line);
    if (this.lines.length > LOG_LIMIT) this.lines.shift();
    for (const listener of this.listeners) listener(line);
  }

  /** Calls back for each new line, and with null when the container has exited. */
  follow(listener: (line: LogLine | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}

export type ContainerPort = { name?: string; containerPort: number };

/** A probe's or hook's `port`: a number, or the name of one of the container's ports. */
export function resolvePort(port: number | string, ports: ContainerPort[]): number {
  return typeof port === 'number' ? port : ports.find((p) => p.name === port)?.containerPort ?? Number(port);
}
