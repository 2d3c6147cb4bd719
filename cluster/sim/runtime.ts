// The sim's container runtime: images map to local programs, each container is a real child
// process, and its stdout/stderr become the container log.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT, packagePath } from '../../lib/package-root.ts';
import { HOOK_PROGRAM, PROXY_UPSTREAM_PORT_ENV } from '../../server/contract.ts';
import { LogFileFollower } from './logfile.ts';
import { wallNow } from './time.ts';

export interface ImageEntry {
  /** What the image runs when the spec gives no command (its ENTRYPOINT). */
  entrypoint: string[];
  /** Paths inside the image that exec hooks may name, mapped to local commands. */
  paths: Record<string, string[]>;
  env: Record<string, string>;
  /** The variable through which the program learns the port to listen on (its first container port's host port). */
  portEnv?: string;
  /**
   * Variables that name a port of another container of the pod on localhost (the proxy's upstream). The sim
   * has no pod network, so it gives the host port it published that container port at, as for portEnv.
   */
  localPortEnvs?: string[];
  /** The image's STOPSIGNAL: the runtime's stop signal when the container's CRI config names none. */
  stopSignal?: string;
  /** A variable given every port of the pod as containerPort=hostPort,... (a program with several listeners). */
  hostPortsEnv?: string;
}

/** Image repository (tag ignored) -> local programs. */
export type ImageMap = Record<string, ImageEntry>;

const labHook = ['/bin/sh', packagePath('server/lab-hook.sh')];

/** The lab-server image: its entrypoint is the server bundled to plain JavaScript (labServerBundle). */
export function defaultImages(serverBundle: string): ImageMap {
  return {
    'termlab/lab-server': {
      entrypoint: [process.execPath, serverBundle],
      paths: { [HOOK_PROGRAM]: labHook, 'lab-hook': labHook, sleep: ['/bin/sleep'], '/bin/sleep': ['/bin/sleep'] },
      env: { LAB_MODE: 'graceful', PORT: '8080' },
      portEnv: 'PORT',
      localPortEnvs: [PROXY_UPSTREAM_PORT_ENV],
      // server/Dockerfile's STOPSIGNAL.
      stopSignal: 'SIGTERM',
    },
  };
}

/** The edge's image (docker.io/library/traefik:v3.7.13): the sim's Traefik (cluster/sim/edge/main.ts). */
export const EDGE_IMAGE_REPOSITORY = 'traefik';

/** The traefik image: its entrypoint the edge bundled, the in-cluster access the sim gives it in `env`. */
export function edgeImage(bundle: string, env: Record<string, string>): ImageEntry {
  return {
    entrypoint: [process.execPath, bundle],
    paths: {},
    env,
    hostPortsEnv: 'TERMLAB_HOST_PORTS',
    // traefik's Dockerfile names no STOPSIGNAL.
    stopSignal: 'SIGTERM',
  };
}

let serverBundle: Promise<string> | null = null;
let edgeBundlePromise: Promise<string> | null = null;

/** The lab server's entry in a checkout; an installed package has no sources. */
const LAB_SERVER_SOURCE = 'server/main.ts';
/** The lab server bundled when the package was packed (bin/cli-bundle.js, LAB_SERVER). */
const LAB_SERVER_SHIPPED = 'dist/lab-server.cjs';
const EDGE_SOURCE = 'cluster/sim/edge/main.ts';
const EDGE_SHIPPED = 'dist/sim-edge.cjs';

/** The sim's Traefik as one plain JavaScript file, built as the lab server's is (labServerBundle). */
export function edgeBundle(): Promise<string> {
  edgeBundlePromise ??= bundleOnce(EDGE_SOURCE, EDGE_SHIPPED, 'the simulated edge');
  return edgeBundlePromise;
}

/**
 * The lab server as one plain JavaScript file, as the real node's image has it: a container starts in about
 * 0.1 s instead of compiling TypeScript on every start, which on a loaded machine took seconds and made the
 * sim's pods late against the real node's. An installed package runs the one built when it was packed; a
 * checkout bundles its sources once per process with esbuild (a devDependency), so that the sim always runs
 * the server as it is written.
 */
export function labServerBundle(): Promise<string> {
  serverBundle ??= bundleOnce(LAB_SERVER_SOURCE, LAB_SERVER_SHIPPED, 'the lab server');
  return serverBundle;
}

/** A program of the package as one file: the shipped one in an installed package, else bundled from its sources. */
export async function bundleOnce(sourcePath: string, shippedPath: string, what: string): Promise<string> {
  const source = packagePath(sourcePath);
  if (!existsSync(source)) {
    const shipped = packagePath(shippedPath);
    if (!existsSync(shipped))
      throw new Error(`${what} is missing from the package: neither ${source} nor ${shipped} is there`);
    return shipped;
  }
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'termlab-sim-server-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'main.cjs');
  await build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

function imageRepository(image: string): string {
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

/** The containers still running, SIGKILLed if this process exits without the kubelet's shutdown (a second Ctrl-C quits at once). */
const running = new Set<ChildProcess>();
let killOnExit = false;
function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (killOnExit) return;
  killOnExit = true;
  process.once('exit', () => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
}

export class ContainerProcess {
  /** The log's lines, the last LOG_LIMIT of `kept` from `dropped` on. */
  private readonly kept: LogLine[] = [];
  /**
   * Lines before this index are past the limit, dropped in batches: shift() on an array this long copied it
   * whole on every line (a pod answering 1,000 requests/s: 150 ms of the sim's main thread in 15 s).
   */
  private dropped = 0;
  readonly child: ChildProcess;
  readonly exited: Promise<{ exitCode: number; signal: NodeJS.Signals | null; wallMs: number }>;
  /** The container's stdout log file: an exec hook appends its lines here (LAB_HOOK_LOG). */
  readonly stdoutPath: string;
  private readonly listeners = new Set<(line: LogLine | null) => void>();
  private readonly removalListeners = new Set<() => void>();
  private logRemoved = false;
  private ended = false;
  private exitedFlag = false;

  constructor(argv: string[], env: Record<string, string>) {
    // stdout and stderr are plain files, as a CRI runtime writes container logs; the kubelet
    // follows them, and anything appended to stdout's file (an exec hook) is in the log too.
    const dir = mkdtempSync(join(tmpdir(), 'termlab-sim-'));
    this.stdoutPath = join(dir, 'stdout.log');
    const stderrPath = join(dir, 'stderr.log');
    const outFd = openSync(this.stdoutPath, 'a', 0o600);
    const errFd = openSync(stderrPath, 'a', 0o600);
    // Its own process group, as a runtime's container is outside the user's session: a terminal's Ctrl-C signals
    // termlab's whole group, and a pod must not get it (no real cluster's pod does). The harness stops what it made
    // through the API as it cleans up; the kubelet's shutdown, or this process's exit, kills the rest.
    try {
      this.child = spawn(argv[0]!, argv.slice(1), {
        cwd: PACKAGE_ROOT,
        env,
        stdio: ['ignore', outFd, errFd],
        detached: true,
      });
      track(this.child);
    } finally {
      closeSync(outFd);
      closeSync(errFd);
    }
    const followers = (['stdout', 'stderr'] as const).map(
      (stream) =>
        new LogFileFollower(stream === 'stdout' ? this.stdoutPath : stderrPath, (text) =>
          this.append({ wallMs: wallNow(), stream, text }),
        ),
    );
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitedFlag = true;
        // Everything the process wrote is in the files once it has exited: read it all, then end.
        for (const follower of followers) follower.close();
        rmSync(dir, { recursive: true, force: true });
        // 128 + N for death by signal N, as the runtime reports it.
        resolve({ exitCode: code ?? 128 + (signal ? constants.signals[signal] : 0), signal, wallMs: wallNow() });
        this.ended = true;
        for (const listener of this.listeners) listener(null);
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

  /** The last LOG_LIMIT lines, oldest first. */
  get lines(): LogLine[] {
    return this.dropped ? this.kept.slice(this.dropped) : this.kept;
  }

  private append(line: LogLine): void {
    this.kept.push(line);
    if (this.kept.length - this.dropped > LOG_LIMIT) this.dropped++;
    if (this.dropped >= LOG_LIMIT / 4) {
      this.kept.splice(0, this.dropped);
      this.dropped = 0;
    }
    for (const listener of this.listeners) listener(line);
  }

  /** Calls back for each new line, and with null when the container has exited. */
  follow(listener: (line: LogLine | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The kubelet removed the exited container and its log file (kuberuntime_container.go removeContainer ->
   * removeContainerLog -> logs/container_log_manager.go Clean): a log reader waiting on the file's directory
   * wakes on the removal (cri-client pkg/logs/logs.go waitLogs, fsnotify.Remove), finds the container not
   * running and ends its follow (ReadLogs at EOF with found false).
   */
  removeLog(): void {
    if (this.logRemoved) return;
    this.logRemoved = true;
    for (const listener of this.removalListeners) listener();
    this.removalListeners.clear();
  }

  /** Calls back once the log is removed (at once if it already is). */
  onLogRemoved(listener: () => void): () => void {
    if (this.logRemoved) {
      listener();
      return () => {};
    }
    this.removalListeners.add(listener);
    return () => this.removalListeners.delete(listener);
  }

  /** A signal by Node's name, or by number (the real-time ones, which Node has no names for). */
  signal(signal: NodeJS.Signals | number): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}

export type ContainerPort = { name?: string; containerPort: number };

/** A probe's or hook's `port`: a number, or the name of one of the container's ports. */
export function resolvePort(port: number | string, ports: ContainerPort[]): number {
  return typeof port === 'number' ? port : (ports.find((p) => p.name === port)?.containerPort ?? Number(port));
}

/** The container port the program serves: its port variable as the pod or the image sets it. */
export function listenPort(
  spec: { image: string; env?: { name: string; value?: string }[] },
  images: ImageMap,
): number | undefined {
  const image = imageFor(images, spec.image);
  if (!image?.portEnv) return undefined;
  const fromPod = spec.env?.find((e) => e.name === image.portEnv && e.value !== undefined)?.value;
  const port = Number(fromPod ?? image.env[image.portEnv]);
  return Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
}

/** The image's local programs, if the sim knows the image (own keys only: the name came from a pod spec). */
export function imageFor(images: ImageMap, image: string): ImageEntry | undefined {
  const repository = imageRepository(image);
  return Object.hasOwn(images, repository) ? images[repository] : undefined;
}

/** Linux's SIGRTMIN as the C library gives it (glibc keeps 32 and 33), and SIGRTMAX. */
const SIGRTMIN = 34;
const SIGRTMAX = 64;
/** Names Kubernetes allows that Node does not know by that name (types.go Signal; SIGCLD is SIGCHLD). */
const SIGNAL_ALIASES: Record<string, NodeJS.Signals> = { SIGCLD: 'SIGCHLD' };

/**
 * A stop signal's name (lifecycle.stopSignal, an image's STOPSIGNAL) as the runtime turns it into a number
 * (containerd via moby/sys/signal ParseSignal): SIGRTMIN+n and SIGRTMAX-n by number, the others by name.
 */
export function stopSignalOf(name: string): NodeJS.Signals | number {
  const rt = /^SIGRT(MIN|MAX)(?:([+-])(\d+))?$/.exec(name);
  if (rt) {
    const base = rt[1] === 'MIN' ? SIGRTMIN : SIGRTMAX;
    const offset = rt[3] === undefined ? 0 : Number(rt[3]) * (rt[2] === '+' ? 1 : -1);
    return base + offset;
  }
  if (SIGNAL_ALIASES[name]) return SIGNAL_ALIASES[name]!;
  if (name in constants.signals) return name as NodeJS.Signals;
  throw new Error(`the runtime cannot parse stop signal ${JSON.stringify(name)}`);
}
