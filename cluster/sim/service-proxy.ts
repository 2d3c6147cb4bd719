// The service proxy, standing in for kube-proxy in iptables mode: it listens on 127.0.0.1:<nodePort>
// for every NodePort Service and pins each TCP connection at accept to one endpoint, chosen at random
// (the iptables "statistic mode random" rules) from its own view of the EndpointSlices. The view
// changes as kube-proxy's rules do: by default in syncs run as its BoundedFrequencyRunner runs them
// (pkg/proxy/runner/bounded_frequency_runner.go, pkg/proxy/iptables/proxier.go): a change starts a
// sync at once unless one ended less than minSyncPeriod ago, then it waits for the rest of that
// period; each sync takes every Service's slices as they are when it starts and its rules are in
// place syncDurationMs later; changes meanwhile wait for the next sync. `syncDelayMs` instead applies
// each change a fixed time late (an experiment: "what if the proxies took 2 s"). An established
// connection keeps its endpoint when the endpoint goes: kube-proxy clears conntrack entries only for
// UDP (pkg/proxy/conntrack/cleanup.go CleanStaleEntries: "we are only interested in UDP services").
import { createServer, connect, type Server, type Socket } from 'node:net';
import { inform } from './controller-queue.ts';
import { MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './endpointslice-controller.ts';
import type { KubeObject, Store } from './store.ts';
import { sleepAtLeast, wallNow } from './time.ts';
import type { NodePortBinder } from './services.ts';
import { NODE_IP } from './ports.ts';

/** --iptables-min-sync-period: 1 s by default (pkg/proxy/apis/config/v1alpha1/defaults.go). */
const DEFAULT_MIN_SYNC_PERIOD_MS = 1000;
/** From a sync's start to its rules in place (iptables-restore): 20-40 ms on the real node (docs/ci-node.md, npm run measure:proxy). */
const DEFAULT_SYNC_DURATION_MS = 30;
/** Truth kept per Service: enough for minutes of a 200 requests/s load. */
const MAX_CONNECTION_RECORDS = 200_000;

export interface ProxyOptions {
  /** A fixed delay for every change instead of kube-proxy's bounded-frequency syncs. */
  syncDelayMs?: number;
  minSyncPeriodMs?: number;
  syncDurationMs?: number;
}

export interface ViewEndpoint {
  podUid: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** Endpoint port by Service port name. */
  ports: Record<string, number>;
}

export interface ProxyConnection {
  at: number;
  podUid: string | null;
  result: 'routed' | 'refused' | 'reset';
  nodePort: number;
  clientPort: number;
}

export interface ProxyViewChange {
  at: number;
  readyPodUids: string[];
  servingTerminatingPodUids: string[];
}

export interface ProxyTruth {
  namespace: string;
  service: string;
  /** The fixed delay, or null for kube-proxy's bounded-frequency syncs. */
  syncDelayMs: number | null;
  connections: ProxyConnection[];
  changes: ProxyViewChange[];
}

/** pkg/proxy/topology.go CategorizeEndpoints (cluster traffic policy): ready ones; else serving-terminating ones. */
export function categorizeEndpoints(endpoints: ViewEndpoint[]): ViewEndpoint[] {
  const ready = endpoints.filter((e) => e.ready);
  return ready.length ? ready : endpoints.filter((e) => e.serving && e.terminating);
}

interface ServiceState {
  truth: ProxyTruth;
  view: ViewEndpoint[];
  appliedSeq: number;
}

export class ServiceProxy implements NodePortBinder {
  readonly syncDelayMs: number | null;
  private readonly minSyncPeriodMs: number;
  private readonly syncDurationMs: number;
  /** Services whose slices changed since the last sync started. */
  private readonly dirty = new Set<string>();
  private syncTimer: NodeJS.Timeout | undefined;
  private syncScheduled = false;
  private syncing = false;
  private lastSyncEnd = Number.NEGATIVE_INFINITY;
  private readonly store: Store;
  private readonly portTarget: (podUid: string, containerPort: number) => { host: string; port: number } | undefined;
  private readonly listeners = new Map<number, Server>();
  /** nodePort -> the Service and the name of its port. */
  private readonly routes = new Map<number, { key: string; portName: string }>();
  private readonly services = new Map<string, ServiceState>();
  private readonly sockets = new Set<Socket>();
  private readonly unsubscribe: (() => void)[] = [];
  private seq = 0;
  private stopped = false;

  constructor(store: Store, portTarget: ServiceProxy['portTarget'], options: ProxyOptions = {}) {
    this.store = store;
    this.portTarget = portTarget;
    this.syncDelayMs = options.syncDelayMs ?? null;
    this.minSyncPeriodMs = options.minSyncPeriodMs ?? DEFAULT_MIN_SYNC_PERIOD_MS;
    this.syncDurationMs = options.syncDurationMs ?? DEFAULT_SYNC_DURATION_MS;
    this.unsubscribe.push(inform(store, 'services', (e) => this.serviceChanged(e.type, e.object)));
    this.unsubscribe.push(
      inform(store, 'endpointslices', (e) => {
        if (e.object.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return;
        const service = e.object.metadata.labels?.[SERVICE_NAME_LABEL];
        if (service) this.slicesChanged(`${e.object.metadata.namespace}/${service}`);
      }),
    );
  }

  bind(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      // No Nagle on either leg: small writes would otherwise wait for delayed ACKs (~40 ms), which iptables' NAT never adds.
      const server = createServer({ noDelay: true }, (socket) => this.accept(port, socket));
      server.once('error', () => resolve(false));
      server.listen({ port, host: NODE_IP, exclusive: true }, () => {
        // Past the bind, a listener error (none is expected) must not take the sim down.
        server.on('error', (error) => console.error(`service proxy: 127.0.0.1:${port}: ${error.message}`));
        this.listeners.set(port, server);
        resolve(true);
      });
    });
  }

  release(port: number): void {
    this.listeners.get(port)?.close();
    this.listeners.delete(port);
    this.routes.delete(port);
  }

  private serviceChanged(type: string, svc: KubeObject): void {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    for (const [port, route] of this.routes) if (route.key === key) this.routes.delete(port);
    if (type === 'DELETED') return;
    for (const p of (svc.spec.ports ?? []) as any[]) {
      if (p.nodePort && (p.protocol ?? 'TCP') === 'TCP') this.routes.set(p.nodePort, { key, portName: p.name ?? '' });
    }
    this.state(key);
  }

  private state(key: string): ServiceState {
    let s = this.services.get(key);
    if (!s) {
      const [namespace, service] = key.split('/') as [string, string];
      s = {
        truth: { namespace, service, syncDelayMs: this.syncDelayMs, connections: [], changes: [] },
        view: [],
        appliedSeq: 0,
      };
      this.services.set(key, s);
    }
    return s;
  }

  /** The Service's endpoints as its slices say now. */
  private snapshot(key: string): ViewEndpoint[] {
    const [namespace, service] = key.split('/') as [string, string];
    const endpoints: ViewEndpoint[] = [];
    for (const slice of this.store.list(
      'endpointslices',
      namespace,
      (s) =>
        s.metadata.labels?.[SERVICE_NAME_LABEL] === service && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY,
    )) {
      const ports = Object.fromEntries(
        ((slice.ports ?? []) as any[])
          .filter((p) => (p.protocol ?? 'TCP') === 'TCP')
          .map((p) => [p.name ?? '', p.port]),
      );
      for (const ep of (slice.endpoints ?? []) as any[]) {
        if (!ep.targetRef?.uid) continue;
        endpoints.push({
          podUid: ep.targetRef.uid,
          ready: ep.conditions?.ready ?? false,
          serving: ep.conditions?.serving ?? false,
          terminating: ep.conditions?.terminating ?? false,
          ports,
        });
      }
    }
    return endpoints;
  }

  private apply(key: string, snapshot: ViewEndpoint[]): void {
    const s = this.state(key);
    const before = JSON.stringify(s.view);
    s.view = snapshot;
    if (before === JSON.stringify(snapshot)) return;
    s.truth.changes.push({
      at: wallNow(),
      readyPodUids: snapshot.filter((e) => e.ready).map((e) => e.podUid),
      servingTerminatingPodUids: snapshot.filter((e) => e.serving && e.terminating).map((e) => e.podUid),
    });
  }

  private slicesChanged(key: string): void {
    if (this.syncDelayMs === null) {
      this.dirty.add(key);
      this.scheduleSync();
      return;
    }
    const snapshot = this.snapshot(key);
    const seq = ++this.seq;
    void sleepAtLeast(this.syncDelayMs).then(() => {
      const s = this.state(key);
      if (this.stopped || seq < s.appliedSeq) return;
      s.appliedSeq = seq;
      this.apply(key, snapshot);
    });
  }

  /** BoundedFrequencyRunner.Run: at once, or when minSyncPeriod has passed since the last sync ended. */
  private scheduleSync(): void {
    if (this.stopped || this.syncing || this.syncScheduled) return;
    this.syncScheduled = true;
    const wait = Math.max(0, this.lastSyncEnd + this.minSyncPeriodMs - wallNow());
    // sleepAtLeast: a Node timer may fire a fraction of a millisecond early.
    void sleepAtLeast(wait, (timer) => {
      this.syncTimer = timer;
      timer.unref();
    }).then(() => {
      if (!this.stopped) this.sync();
    });
  }

  /** syncProxyRules: every changed Service as it is now, in place once the sync's own time has passed. */
  private sync(): void {
    this.syncScheduled = false;
    this.syncing = true;
    const snapshots = [...this.dirty].map((key) => [key, this.snapshot(key)] as const);
    this.dirty.clear();
    void sleepAtLeast(this.syncDurationMs).then(() => {
      if (this.stopped) return;
      for (const [key, snapshot] of snapshots) this.apply(key, snapshot);
      this.lastSyncEnd = wallNow();
      this.syncing = false;
      if (this.dirty.size) this.scheduleSync();
    });
  }

  private record(s: ServiceState | undefined, entry: ProxyConnection): void {
    if (!s || s.truth.connections.length >= MAX_CONNECTION_RECORDS) return;
    s.truth.connections.push(entry);
  }

  /** One accepted connection: pick an endpoint, connect, splice; a refusal resets the client. */
  private accept(nodePort: number, client: Socket): void {
    const at = wallNow();
    const clientPort = client.remotePort ?? 0;
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => {});
    const route = this.routes.get(nodePort);
    const s = route && this.services.get(route.key);
    const candidates = s ? categorizeEndpoints(s.view).filter((e) => e.ports[route!.portName] !== undefined) : [];
    if (!candidates.length) {
      // iptables REJECTs (ICMP port unreachable: ECONNREFUSED); the sim holds the port open, so it resets.
      this.record(s, { at, podUid: null, result: 'refused', nodePort, clientPort });
      client.resetAndDestroy();
      return;
    }
    const endpoint = candidates[Math.floor(Math.random() * candidates.length)]!;
    const target = this.portTarget(endpoint.podUid, endpoint.ports[route!.portName]!);
    if (!target) {
      this.record(s, { at, podUid: endpoint.podUid, result: 'reset', nodePort, clientPort });
      client.resetAndDestroy();
      return;
    }
    client.pause();
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    this.sockets.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.record(s, { at, podUid: endpoint.podUid, result: 'routed', nodePort, clientPort });
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) this.record(s, { at, podUid: endpoint.podUid, result: 'reset', nodePort, clientPort });
      if (!client.destroyed) client.resetAndDestroy();
    });
    upstream.on('close', () => this.sockets.delete(upstream));
    client.on('error', () => {
      if (!upstream.destroyed) upstream.resetAndDestroy();
    });
    client.on('close', (hadError) => {
      if (!connected) upstream.destroy();
      else if (hadError && !upstream.destroyed) upstream.resetAndDestroy();
    });
  }

  truth(namespace: string, service: string): ProxyTruth | undefined {
    const s = this.services.get(`${namespace}/${service}`);
    return s && structuredClone(s.truth);
  }

  allTruth(): ProxyTruth[] {
    return [...this.services.values()].map((s) => structuredClone(s.truth));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.syncTimer);
    for (const u of this.unsubscribe) u();
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(
      [...this.listeners.values()].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
    this.listeners.clear();
  }
}
