// Faults on demand, for tests of the harness's resilience (test API and admin endpoint).
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Server } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { z } from 'zod';

/** The longest outage a fault may make: long enough to outlast any --api-patience a test sets. */
const MAX_OUTAGE_SECONDS = 600;

export const FaultRequestSchema = z.discriminatedUnion('fault', [
  z.object({ fault: z.literal('drop-watches') }),
  z.object({ fault: z.literal('expire-next-watch') }),
  z.object({ fault: z.literal('delay-events'), ms: z.int().min(0).max(60_000) }),
  z.object({ fault: z.literal('fail-next-delete'), namespace: z.string(), name: z.string() }),
  /** The next pod create in the namespace is applied, but its answer never arrives: the connection is cut once the pod is Ready (a network drop after the request got through). */
  z.object({ fault: z.literal('lose-next-create-answer'), namespace: z.string() }),
  z.object({ fault: z.literal('ignore-sigterm'), namespace: z.string(), name: z.string() }),
  /** The API server goes away (listener closed, every connection cut, upgraded streams too) and comes back; the kubelet carries on. */
  z.object({ fault: z.literal('refuse-connections'), seconds: z.number().positive().max(MAX_OUTAGE_SECONDS) }),
  /** The API server answers nothing for a while on any connection, streams included, then everything it held (as after SIGSTOP/SIGCONT). */
  z.object({ fault: z.literal('stall-requests'), seconds: z.number().positive().max(MAX_OUTAGE_SECONDS) }),
  /** Every open port-forward stream is reset; the API itself stays healthy (a laptop's network blip). */
  z.object({ fault: z.literal('reset-port-forwards') }),
  /** The kubelet stopped (SIGSTOP) for a while, then continued; the containers and the API run on. */
  z.object({ fault: z.literal('pause-kubelet'), seconds: z.number().positive().max(MAX_OUTAGE_SECONDS) }),
]);
export type FaultRequest = z.infer<typeof FaultRequestSchema>;

export class Faults {
  expireNextWatch = false;
  readonly failNextDelete = new Set<string>();
  readonly loseNextCreateAnswer = new Set<string>();
  readonly ignoreSigterm = new Set<string>();

  static key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  takeDeleteFailure(namespace: string, name: string): boolean {
    return this.failNextDelete.delete(Faults.key(namespace, name));
  }

  takeWatchExpiry(): boolean {
    const expire = this.expireNextWatch;
    this.expireNextWatch = false;
    return expire;
  }
}

/**
 * Outages of the API server as a whole. The kubelet is untouched: pods keep running, hooks and
 * kills happen on time, and the store records it all for when the API answers again.
 *
 * Every connection counts, upgraded ones included (pods/portforward, pods/exec, pods/attach) and
 * the long-lived responses (watches, followed logs): a real kube-apiserver holds each of them, so
 * its death cuts them all. Measured on the real node (issue 21): kube-apiserver SIGKILLed during a
 * run cut the harness's port-forward (the watch dropped with ECONNRESET) and the lab server logged
 * `aborted` 145 ms later, its client gone. Node's closeAllConnections() alone leaves upgraded
 * sockets open (the http server lets go of them), which is why every socket is tracked here.
 */
/**
 * What the kubelet's own API client meets: the API refusing connections (its watch is cut and
 * retried with backoff, reflector.ts) or answering nothing (its watch is held). ListenerFaults reports here.
 */
export class ApiReachability extends EventEmitter {
  serving = true;
  stalled = false;
  refused(): void {
    this.serving = false;
    this.emit('refused');
  }
  listening(): void {
    this.serving = true;
    this.emit('listening');
  }
  stall(): void {
    this.stalled = true;
    this.emit('stalled');
  }
  released(): void {
    this.stalled = false;
    this.emit('released');
  }
}

/**
 * The kubelet stopped with SIGSTOP and continued with SIGCONT (dev/node/faults-inject.ts
 * pauseKubelet). Measured on the real node (v1.37.2, 2026-12-01, issue 21): while it is stopped
 * nothing of the kubelet runs — no status write, no event, no relist, no probe result, and the
 * streams it proxies (container logs, port-forward) stand still — but the containers and
 * containerd run on: an exec hook ends on time, and a StopContainer already sent kills on time
 * (TERM at 21.45 s, the kubelet stopped at 21.53 s, grace 3 s: finishedAt 24 s, written only once the
 * kubelet ran again at 41.8 s). The kubelet's own waits are Go timers: they fire late, on SIGCONT,
 * so a hook's elapsed time counts the pause (the node's short-grace: TERM 3.1 s after the hook ended).
 */
export class KubeletPause extends EventEmitter {
  private timer: NodeJS.Timeout | null = null;
  private waiting: (() => void)[] = [];

  get paused(): boolean {
    return this.timer !== null;
  }

  pause(seconds: number): string {
    if (this.timer) return 'the kubelet is already paused';
    this.timer = setTimeout(() => this.resume(), seconds * 1000);
    this.emit('paused');
    return `the kubelet is paused for ${seconds} s`;
  }

  /** At once while the kubelet runs; else once it runs again (what a goroutine blocked by SIGSTOP does). */
  running(): Promise<void> {
    return this.timer ? new Promise((resolve) => this.waiting.push(resolve)) : Promise.resolve();
  }

  /** Calls `act` now, or when the pause ends: a kubelet timer or callback that comes due while it is stopped. */
  whenRunning(act: () => void): void {
    if (this.timer) this.waiting.push(act);
    else act();
  }

  resume(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    const waiting = this.waiting;
    this.waiting = [];
    this.emit('resumed');
    for (const wake of waiting) wake();
  }
}

export class ListenerFaults extends EventEmitter {
  private readonly server: Server;
  private readonly port: number;
  private readonly host: string;
  private refuseTimer: NodeJS.Timeout | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  /** Every TCP connection the API holds, upgraded or not, from accept to close. */
  private readonly raw = new Set<Socket>();
  /** The same connections once TLS is up: what a stall holds. */
  private readonly secure = new Set<TLSSocket>();
  private readonly stalled = new Set<TLSSocket>();
  private readonly exempt = new WeakSet<Socket>();

  private held: (() => void)[] = [];
  private readonly reach: ApiReachability;

  /** Call once the server listens, before any connection; takes over its request and upgrade handlers so a stall can hold them. */
  constructor(server: Server, host: string, port: number, reach = new ApiReachability()) {
    super();
    this.server = server;
    this.host = host;
    this.port = port;
    this.reach = reach;
    // The http server reads a request off a paused socket all the same (it consumes the socket's
    // handle directly), so new requests and upgrades are held here, and writes by corking.
    for (const event of ['request', 'upgrade'] as const) {
      const handlers = server.listeners(event) as ((...args: unknown[]) => void)[];
      server.removeAllListeners(event);
      server.on(event, (...args: unknown[]) => {
        // A client that goes away mid-request is ordinary here (faults cut connections on purpose).
        (args[0] as IncomingMessage).on('error', () => {});
        const handle = () => {
          for (const handler of handlers) handler.apply(server, args);
        };
        if (this.stallTimer) this.held.push(handle);
        else handle();
      });
    }
    server.on('connection', (socket: Socket) => {
      this.raw.add(socket);
      socket.on('close', () => this.raw.delete(socket));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      this.secure.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.secure.delete(socket);
        this.stalled.delete(socket);
      });
      if (this.stallTimer) this.hold(socket);
    });
  }

  /**
   * As a crashed API server: the listener closes (new connections are refused) and every open
   * connection is cut without a goodbye, streams included (the admin request that asked for it too).
   */
  refuse(seconds: number): string {
    if (this.refuseTimer) return 'the API is already refusing connections';
    this.server.close();
    for (const socket of this.raw) socket.destroy();
    this.reach.refused();
    this.refuseTimer = setTimeout(() => {
      this.refuseTimer = null;
      this.server.listen(this.port, this.host, () => this.reach.listening());
    }, seconds * 1000);
    return `the API refuses connections for ${seconds} s`;
  }

  /**
   * As a stopped API server (SIGSTOP, a long GC pause, an etcd stall holding every handler): the
   * connections stay open but nothing is read from or written to any of them, streams included,
   * until the stall ends; then everything held flows. New connections are held the same way once
   * their TLS handshake is done (the kernel accepts them for a stopped process too). `via` is spared.
   */
  stall(seconds: number, via?: Socket): string {
    if (this.stallTimer) return 'the API is already stalled';
    if (via) this.exempt.add(via);
    this.stallTimer = setTimeout(() => this.release(), seconds * 1000);
    for (const socket of this.secure) this.hold(socket);
    this.reach.stall();
    return `the API answers nothing for ${seconds} s`;
  }

  private hold(socket: TLSSocket): void {
    if (this.exempt.has(socket) || this.stalled.has(socket)) return;
    this.stalled.add(socket);
    // Upgraded streams (port-forward, exec) are read through 'data' events, which a pause stops.
    socket.pause();
    // Writes pile up in the socket until uncork, as in a stopped process's unwritten buffers.
    socket.cork();
  }

  private release(): void {
    this.stallTimer = null;
    const held = [...this.stalled];
    this.stalled.clear();
    this.emit('released');
    this.reach.released();
    for (const socket of held) {
      socket.uncork();
      socket.resume();
    }
    const requests = this.held;
    this.held = [];
    for (const handle of requests) handle();
  }

  /** Ends any outage now (the sim is stopping). */
  clear(): void {
    if (this.refuseTimer) {
      clearTimeout(this.refuseTimer);
      this.refuseTimer = null;
      this.reach.listening();
    }
    if (this.stallTimer) {
      clearTimeout(this.stallTimer);
      this.release();
    }
  }
}
