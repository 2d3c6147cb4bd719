// Faults on demand, for tests of the harness's resilience (test API and admin endpoint).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { z } from 'zod';

/** The longest outage a fault may make: long enough to outlast any --api-patience a test sets. */
const MAX_OUTAGE_SECONDS = 600;

export const FaultRequestSchema = z.discriminatedUnion('fault', [
  z.object({ fault: z.literal('drop-watches') }),
  z.object({ fault: z.literal('expire-next-watch') }),
  z.object({ fault: z.literal('delay-events'), ms: z.int().min(0).max(60_000) }),
  z.object({ fault: z.literal('fail-next-delete'), namespace: z.string(), name: z.string() }),
  z.object({ fault: z.literal('ignore-sigterm'), namespace: z.string(), name: z.string() }),
  /** The API server goes away (listener closed, every connection cut) and comes back; the kubelet carries on. */
  z.object({ fault: z.literal('refuse-connections'), seconds: z.number().positive().max(MAX_OUTAGE_SECONDS) }),
  /** The API server answers nothing for a while, then everything it held (as after SIGSTOP/SIGCONT). */
  z.object({ fault: z.literal('stall-requests'), seconds: z.number().positive().max(MAX_OUTAGE_SECONDS) }),
]);
export type FaultRequest = z.infer<typeof FaultRequestSchema>;

export class Faults {
  expireNextWatch = false;
  readonly failNextDelete = new Set<string>();
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

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Outages of the API server's listener. The kubelet is untouched: pods keep running, hooks and
 * kills happen on time, and the store records it all for when the API answers again.
 */
export class ListenerFaults {
  private readonly server: Server;
  private readonly port: number;
  private readonly host: string;
  private refuseTimer: NodeJS.Timeout | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private held: (() => void)[] = [];

  /** Call once the server listens; takes over its request handlers so a stall can hold requests. */
  constructor(server: Server, host: string, port: number) {
    this.server = server;
    this.host = host;
    this.port = port;
    const handlers = server.listeners('request') as RequestHandler[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // A client that goes away mid-request is ordinary here (faults cut connections on purpose).
      req.on('error', () => {});
      const handle = () => { for (const handler of handlers) handler.call(server, req, res); };
      if (this.stallTimer) this.held.push(handle);
      else handle();
    });
  }

  refuse(seconds: number): string {
    if (this.refuseTimer) return 'the API is already refusing connections';
    this.server.close();
    this.server.closeAllConnections();
    this.refuseTimer = setTimeout(() => {
      this.refuseTimer = null;
      this.server.listen(this.port, this.host);
    }, seconds * 1000);
    return `the API refuses connections for ${seconds} s`;
  }

  stall(seconds: number): string {
    if (this.stallTimer) return 'the API is already stalled';
    // Idle keep-alive connections go, so that every new request meets the stall.
    this.server.closeIdleConnections();
    this.stallTimer = setTimeout(() => this.release(), seconds * 1000);
    return `the API answers nothing for ${seconds} s`;
  }

  private release(): void {
    this.stallTimer = null;
    const held = this.held;
    this.held = [];
    for (const handle of held) handle();
  }

  /** Ends any outage now (the sim is stopping). */
  clear(): void {
    if (this.refuseTimer) { clearTimeout(this.refuseTimer); this.refuseTimer = null; }
    if (this.stallTimer) { clearTimeout(this.stallTimer); this.release(); }
  }
}
