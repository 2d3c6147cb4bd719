// v1 Services: defaults and validation (pkg/apis/core/v1/defaults.go, pkg/apis/core/validation), a
// ClusterIP from 10.96.0.0/16 (not routable here: the sim has no pod network) and NodePorts in
// 30000–32767, each bound by the service proxy on 127.0.0.1 before the Service is stored.
import { randomInt } from 'node:crypto';
import { ApiError } from './status.ts';
import type { KubeObject } from './store.ts';

const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
const CLUSTER_IP_PREFIX = '10.96.';
/** Random nodePorts tried before giving up: the range is shared with every other program on the machine. */
const NODE_PORT_ATTEMPTS = 64;

/** Binds and frees 127.0.0.1:<nodePort> (the service proxy). */
export interface NodePortBinder {
  bind(port: number): Promise<boolean>;
  release(port: number): void;
}

const invalidField = (name: string, field: string, message: string) =>
  new ApiError(422, 'Invalid', `Service "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind: 'Service',
    causes: [{ reason: 'FieldValueInvalid', message, field }],
  });

export class ServiceAllocator {
  private readonly clusterIPs = new Set<string>();
  private readonly nodePorts = new Set<number>();
  private readonly binder: NodePortBinder;

  constructor(binder: NodePortBinder) {
    this.binder = binder;
  }

  /**
   * Defaults, validation and allocation for a new Service (or the new ports of an updated one).
   * `dryRun`: the addresses are picked and checked as for a real write but not taken, and no
   * NodePort is bound (the apiserver's dry-run allocators).
   */
  async prepare(svc: KubeObject, old?: KubeObject, dryRun = false): Promise<void> {
    const name = svc.metadata.name;
    const spec = (svc.spec ??= {});
    spec.type ??= 'ClusterIP';
    if (!['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'].includes(spec.type)) {
      throw invalidField(
        name,
        'spec.type',
        `Unsupported value: ${JSON.stringify(spec.type)}: supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`,
      );
    }
    spec.sessionAffinity ??= 'None';
    const ports: any[] = spec.ports ?? [];
    if (spec.type !== 'ExternalName' && ports.length === 0) throw invalidField(name, 'spec.ports', 'Required value');
    const seen = new Set<string>();
    for (const [i, p] of ports.entries()) {
      if (!Number.isInteger(p?.port) || p.port < 1 || p.port > 65535)
        throw invalidField(
          name,
          `spec.ports[${i}].port`,
          `Invalid value: ${JSON.stringify(p?.port)}: must be between 1 and 65535, inclusive`,
        );
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
      if (ports.length > 1 && !p.name) throw invalidField(name, `spec.ports[${i}].name`, 'Required value');
      if (seen.has(p.name ?? ''))
        throw invalidField(name, `spec.ports[${i}].name`, `Duplicate value: ${JSON.stringify(p.name)}`);
      seen.add(p.name ?? '');
    }
    if (spec.type === 'ExternalName') return;
    spec.internalTrafficPolicy ??= 'Cluster';
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    if (old) {
      if (spec.clusterIP !== undefined && spec.clusterIP !== old.spec.clusterIP)
        throw invalidField(
          name,
          'spec.clusterIP',
          `Invalid value: ${JSON.stringify(spec.clusterIP)}: field is immutable`,
        );
      spec.clusterIP = old.spec.clusterIP;
      spec.clusterIPs = old.spec.clusterIPs;
    } else {
      spec.clusterIP = this.allocateClusterIP(name, spec.clusterIP, dryRun);
      spec.clusterIPs = [spec.clusterIP];
    }
    const wantsNodePorts = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    if (wantsNodePorts) spec.externalTrafficPolicy ??= 'Cluster';
    const kept = new Set<number>((old?.spec.ports ?? []).map((p: any) => p.nodePort).filter(Boolean));
    const bound: number[] = [];
    try {
      for (const [i, p] of ports.entries()) {
        if (!wantsNodePorts) {
          delete p.nodePort;
          continue;
        }
        if (p.nodePort !== undefined && kept.has(p.nodePort)) {
          kept.delete(p.nodePort);
          continue;
        }
        p.nodePort = await this.allocateNodePort(name, `spec.ports[${i}].nodePort`, p.nodePort, dryRun);
        if (!dryRun) bound.push(p.nodePort);
      }
    } catch (error) {
      for (const port of bound) this.releaseNodePort(port);
      throw error;
    }
    // Ports the update dropped go back to the pool.
    if (!dryRun) for (const port of kept) this.releaseNodePort(port);
    if (spec.type === 'LoadBalancer') svc.status = { loadBalancer: {} };
  }

  private allocateClusterIP(name: string, requested: unknown, dryRun: boolean): string {
    if (requested === 'None') return 'None';
    if (requested !== undefined && requested !== '') {
      const m = typeof requested === 'string' ? /^10\.96\.(\d{1,3})\.(\d{1,3})$/.exec(requested) : null;
      if (!m || Number(m[1]) > 255 || Number(m[2]) > 255)
        throw invalidField(
          name,
          'spec.clusterIP',
          `Invalid value: ${JSON.stringify(requested)}: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
        );
      if (this.clusterIPs.has(requested as string))
        throw invalidField(
          name,
          'spec.clusterIP',
          `Invalid value: ${JSON.stringify(requested)}: provided IP is already allocated`,
        );
      if (!dryRun) this.clusterIPs.add(requested as string);
      return requested as string;
    }
    for (;;) {
      // .0.0 is the network and .0.1 the `kubernetes` Service's on a real cluster.
      const ip = `${CLUSTER_IP_PREFIX}${randomInt(256)}.${randomInt(1, 255)}`;
      if (ip === '10.96.0.1' || this.clusterIPs.has(ip)) continue;
      if (!dryRun) this.clusterIPs.add(ip);
      return ip;
    }
  }

  private async allocateNodePort(name: string, field: string, requested: unknown, dryRun: boolean): Promise<number> {
    if (requested !== undefined && requested !== 0) {
      if (
        !Number.isInteger(requested) ||
        (requested as number) < NODE_PORT_MIN ||
        (requested as number) > NODE_PORT_MAX
      ) {
        throw invalidField(
          name,
          field,
          `Invalid value: ${JSON.stringify(requested)}: provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}`,
        );
      }
      const port = requested as number;
      if (this.nodePorts.has(port))
        throw invalidField(name, field, `Invalid value: ${port}: provided port is already allocated`);
      if (dryRun) return port;
      if (!(await this.binder.bind(port)))
        throw invalidField(
          name,
          field,
          `Invalid value: ${port}: provided port is in use on this machine (the simulated cluster's service proxy cannot listen on 127.0.0.1:${port})`,
        );
      this.nodePorts.add(port);
      return port;
    }
    for (let attempt = 0; attempt < NODE_PORT_ATTEMPTS; attempt++) {
      const port = randomInt(NODE_PORT_MIN, NODE_PORT_MAX + 1);
      if (this.nodePorts.has(port)) continue;
      if (dryRun) return port;
      // Taken on the machine (another simulated cluster, another program): try another.
      if (!(await this.binder.bind(port))) continue;
      this.nodePorts.add(port);
      return port;
    }
    throw new ApiError(
      500,
      'InternalError',
      `Internal error occurred: failed to allocate a nodePort: no free port found in ${NODE_PORT_ATTEMPTS} attempts on 127.0.0.1`,
    );
  }

  private releaseNodePort(port: number): void {
    this.nodePorts.delete(port);
    this.binder.release(port);
  }

  /** The Service is gone: its addresses go back to the pools. */
  released(svc: KubeObject): void {
    if (svc.spec?.clusterIP && svc.spec.clusterIP !== 'None') this.clusterIPs.delete(svc.spec.clusterIP);
    for (const p of (svc.spec?.ports ?? []) as any[]) if (p.nodePort) this.releaseNodePort(p.nodePort);
  }
}
