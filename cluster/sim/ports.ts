// Host ports for container ports. The sim has no pod network: every container port is published
// on 127.0.0.1 at a free port the kernel picks (a hostPort, as the pod's spec then says), so any
// number of pods and simulated clusters share one machine, on Linux and macOS alike.
import { createServer } from 'node:net';

export const NODE_IP = '127.0.0.1';
export const NODE_NAME = 'termlab-sim-node';

/** A port free on NODE_IP right now: the kernel picks it; the listener closes before the container binds it. */
export function freeHostPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, NODE_IP, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The node's published ports (as the CNI portmap plugin's table): pod UID -> container port -> host port. */
export class NodePorts {
  private readonly byPod = new Map<string, Map<number, number>>();

  publish(uid: string, ports: Map<number, number>): void {
    this.byPod.set(uid, ports);
  }

  of(uid: string): Map<number, number> {
    return this.byPod.get(uid) ?? new Map();
  }

  forget(uid: string): void {
    this.byPod.delete(uid);
  }
}
