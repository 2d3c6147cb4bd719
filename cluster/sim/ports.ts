// Host ports for container ports. The sim has no pod network: every container port is published
// on 127.0.0.1 at a free host port (a hostPort, as the pod's spec then says), so any number of pods
// and simulated clusters share one machine, on Linux and macOS alike.
import { randomInt } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export const NODE_IP = '127.0.0.1';
export const NODE_NAME = 'termlab-sim-node';

/**
 * Host ports come from below the kernel's ephemeral range and below Services' NodePorts (30000–32767):
 * the container binds its port a while after it is chosen, and a port from the ephemeral range could
 * meanwhile go to any listen(0) or connect() on the machine (a port-forward's local listener), so the
 * pod's forwards and probes would reach whatever took it, another pod's server included.
 */
const HOST_PORT_MIN = 20000;
const HOST_PORT_MAX = Math.max(HOST_PORT_MIN + 999, Math.min(29999, ephemeralLow() - 1));
/** How many host ports the node can give: at least 1,000. */
export const HOST_PORT_COUNT = HOST_PORT_MAX - HOST_PORT_MIN + 1;
/** Random ports tried before giving up: the range is shared with every other program on the machine. */
const HOST_PORT_ATTEMPTS = 64;
/** macOS's default net.inet.ip.portrange.first; Linux says its own in /proc. */
const DEFAULT_EPHEMERAL_LOW = 49152;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

/**
 * Ports given to pods of any sim in this process and not yet released (never given twice, bound or not), each
 * with its stand-in once it has one: a UDP socket bound to the same number, which a sim in another process (a
 * test file beside this one, a second `termlab run --sim`) cannot bind too, so it picks another. The TCP port
 * stays free for the container, which binds it a while after it was chosen; without the stand-in another
 * process's pod could take it meanwhile, this pod's container would fail to bind, and its probes would reach
 * the other pod's server and call it Ready. The kernel drops the stand-in with the process that held it.
 */
const held = new Map<number, UdpSocket | null>();

/** Gives the port its stand-in: true once bound; false when the number is taken; any other failure (no file descriptor left) as it is. */
function standIn(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      if (error.code === 'EADDRINUSE') resolve(false);
      else reject(new Error(`cannot hold host port ${port} on ${NODE_IP}: ${error.message}`));
    });
    socket.bind({ port, address: NODE_IP, exclusive: true }, () => {
      socket.removeAllListeners('error');
      // It only holds the number: an error later (none is expected) leaves it bound, and release closes it.
      socket.on('error', () => {});
      socket.unref();
      held.set(port, socket);
      resolve(true);
    });
  });
}

function unhold(port: number): void {
  held.get(port)?.close();
  held.delete(port);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(false);
      else reject(new Error(`cannot check host port ${port} on ${NODE_IP}: ${error.message}`));
    });
    probe.listen({ port, host: NODE_IP, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** The node's published ports (as the CNI portmap plugin's table): pod UID -> container port -> host port. */
export class NodePorts {
  private readonly byPod = new Map<string, Map<number, number>>();
  /** The ports reserve() gave each pod (a spec's own hostPort is not one). */
  private readonly reservedBy = new Map<string, number[]>();

  /** A host port free on NODE_IP now and held for one pod until released (or forgotten with its pod). */
  async reserve(): Promise<number> {
    for (let attempt = 0; attempt < HOST_PORT_ATTEMPTS; attempt++) {
      const port = randomInt(HOST_PORT_MIN, HOST_PORT_MAX + 1);
      if (held.has(port)) continue;
      // Held before the check, so a pick made meanwhile in this process or another cannot choose it too.
      held.set(port, null);
      let free = false;
      try {
        free = (await standIn(port)) && (await bindable(port));
      } finally {
        if (!free) unhold(port);
      }
      if (free) return port;
    }
    throw new Error(
      `no free host port in ${HOST_PORT_MIN}-${HOST_PORT_MAX} on ${NODE_IP} after ${HOST_PORT_ATTEMPTS} tries`,
    );
  }

  /** Reserved ports no pod got (it was deleted before it was bound). */
  release(ports: Iterable<number>): void {
    for (const port of ports) unhold(port);
  }

  publish(uid: string, ports: Map<number, number>, reserved: Iterable<number>): void {
    this.byPod.set(uid, ports);
    this.reservedBy.set(uid, [...reserved]);
  }

  of(uid: string): Map<number, number> {
    return this.byPod.get(uid) ?? new Map();
  }

  forget(uid: string): void {
    this.byPod.delete(uid);
    this.release(this.reservedBy.get(uid) ?? []);
    this.reservedBy.delete(uid);
  }

  /** The node stopped: its processes are gone, so are its pods' ports. */
  forgetAll(): void {
    for (const uid of [...this.byPod.keys()]) this.forget(uid);
  }
}
