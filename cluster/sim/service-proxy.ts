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
// This class is the control plane (informers, syncs) in the sim's main thread; the data path (the
// listeners, the pick at accept, the splice, the truth records) runs in service-proxy-worker.ts, to
// which each sync pushes its rules, as kube-proxy installs rules the kernel then applies alone.
import { Worker } from 'node:worker_threads';
import { inform } from './controller-queue.ts';
import { MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './endpointslice-controller.ts';
import type { KubeObject, Store } from './store.ts';
import { sleepAtLeast, wallNow } from './time.ts';
import type { NodePortBinder } from './services.ts';
import { NODE_IP } from './ports.ts';
import { bundleOnce } from './runtime.ts';
import type {
  FromWorker,
  ProxyConnection,
  ProxyViewChange,
  RuleEndpoint,
  ServiceRecords,
  ToWorker,
} from './service-proxy-worker.ts';

export type { ProxyConnection, ProxyViewChange } from './service-proxy-worker.ts';

/** --iptables-min-sync-period: 1 s by default (pkg/proxy/apis/config/v1alpha1/defaults.go). */
const DEFAULT_MIN_SYNC_PERIOD_MS = 1000;
/** From a sync's start to its rules in place (iptables-restore): 20-40 ms on the real node (docs/ci-node.md, npm run measure:proxy). */
const DEFAULT_SYNC_DURATION_MS = 30;
const WORKER_SOURCE = 'cluster/sim/service-proxy-worker.ts';
/** The worker bundled when the package was packed (bin/cli-bundle.js). */
const WORKER_SHIPPED = 'dist/service-proxy-worker.cjs';
let workerBundle: Promise<string> | null = null;

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
  namespace: string;
  service: string;
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
  /** nodePort -> the Service and the name of its port. */
  private readonly routes = new Map<number, { key: string; portName: string }>();
  private readonly services = new Map<string, ServiceState>();
  private readonly unsubscribe: (() => void)[] = [];
  private seq = 0;
  private stopped = false;
  /** The data path; messages posted before it runs wait in order for it. */
  private readonly worker: Promise<Worker>;
  private requestId = 0;
  private readonly pending = new Map<number, (answer: FromWorker) => void>();
  private workerExited = false;

  constructor(store: Store, portTarget: ServiceProxy['portTarget'], options: ProxyOptions = {}) {
    this.store = store;
    this.portTarget = portTarget;
    this.syncDelayMs = options.syncDelayMs ?? null;
    this.minSyncPeriodMs = options.minSyncPeriodMs ?? DEFAULT_MIN_SYNC_PERIOD_MS;
    this.syncDurationMs = options.syncDurationMs ?? DEFAULT_SYNC_DURATION_MS;
    workerBundle ??= bundleOnce(WORKER_SOURCE, WORKER_SHIPPED, "the service proxy's data path");
    this.worker = workerBundle.then((script) => {
      const worker = new Worker(script);
      worker.on('message', (answer: FromWorker) => {
        this.pending.get(answer.id)?.(answer);
        this.pending.delete(answer.id);
      });
      // The sim cannot route without it: say why, loudly, rather than refuse every connection silently.
      worker.on('error', (error) => console.error(`service proxy: its data path failed: ${error.stack ?? error}`));
      // Gone: no answer will come; what waited for one gets none (a bind fails, the truth is empty).
      worker.on('exit', () => {
        this.workerExited = true;
        for (const [id, resolve] of this.pending) resolve({ type: 'stopped', id });
        this.pending.clear();
      });
      return worker;
    });
    // Until the first post awaits it, a failed start must not be an unhandled rejection.
    this.worker.catch(() => {});
    this.unsubscribe.push(inform(store, 'services', (e) => this.serviceChanged(e.type, e.object)));
    this.unsubscribe.push(
      inform(store, 'endpointslices', (e) => {
        if (e.object.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return;
        const service = e.object.metadata.labels?.[SERVICE_NAME_LABEL];
        if (service) this.slicesChanged(`${e.object.metadata.namespace}/${service}`);
      }),
    );
  }

  private post(message: ToWorker): void {
    void this.worker.then((w) => w.postMessage(message));
  }

  private ask(message: ToWorker & { id: number }): Promise<FromWorker> {
    return this.worker.then(
      (w) =>
        new Promise((resolve) => {
          // A message to a worker that is gone is dropped: its answer would never come.
          if (this.workerExited) return resolve({ type: 'stopped', id: message.id });
          this.pending.set(message.id, resolve);
          w.postMessage(message);
        }),
    );
  }

  async bind(port: number): Promise<boolean> {
    const answer = await this.ask({ type: 'bind', id: ++this.requestId, port, host: NODE_IP });
    return answer.type === 'bound' && answer.ok;
  }

  release(port: number): void {
    this.post({ type: 'release', port });
    this.routes.delete(port);
  }

  private serviceChanged(type: string, svc: KubeObject): void {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    for (const [port, route] of this.routes)
      if (route.key === key) {
        this.routes.delete(port);
        this.post({ type: 'unroute', nodePort: port });
      }
    if (type === 'DELETED') return;
    this.state(key);
    for (const p of (svc.spec.ports ?? []) as any[]) {
      if (p.nodePort && (p.protocol ?? 'TCP') === 'TCP') {
        this.routes.set(p.nodePort, { key, portName: p.name ?? '' });
        this.post({ type: 'route', nodePort: p.nodePort, key, portName: p.name ?? '' });
      }
    }
  }

  private state(key: string): ServiceState {
    let s = this.services.get(key);
    if (!s) {
      const [namespace, service] = key.split('/') as [string, string];
      s = { namespace, service, view: [], appliedSeq: 0 };
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
    // The rules name each endpoint's address (the pod's published port) as iptables' DNAT does; a pod whose
    // process has gone since refuses the connection, and the data path resets the client.
    const candidates: RuleEndpoint[] = categorizeEndpoints(snapshot).map((e) => ({
      podUid: e.podUid,
      targets: Object.fromEntries(
        Object.entries(e.ports).map(([name, port]) => [name, this.portTarget(e.podUid, port) ?? null]),
      ),
    }));
    this.post({
      type: 'rules',
      key,
      syncedAt: wallNow(),
      candidates,
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

  private truthOf(s: ServiceState, records: ServiceRecords | undefined): ProxyTruth {
    return {
      namespace: s.namespace,
      service: s.service,
      syncDelayMs: this.syncDelayMs,
      connections: records?.connections ?? [],
      changes: records?.changes ?? [],
    };
  }

  /** What the data path did for a Service, as of now: every connection it accepted, every rule change. */
  async truth(namespace: string, service: string): Promise<ProxyTruth | undefined> {
    const key = `${namespace}/${service}`;
    const s = this.services.get(key);
    if (!s) return undefined;
    const answer = await this.ask({ type: 'truth', id: ++this.requestId, key });
    return this.truthOf(s, answer.type === 'truth' ? answer.records[key] : undefined);
  }

  async allTruth(): Promise<ProxyTruth[]> {
    const answer = await this.ask({ type: 'truth', id: ++this.requestId, key: null });
    const records = answer.type === 'truth' ? answer.records : {};
    return [...this.services].map(([key, s]) => this.truthOf(s, records[key]));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.syncTimer);
    for (const u of this.unsubscribe) u();
    const worker = await this.worker.catch(() => null);
    if (!worker) return;
    await this.ask({ type: 'stop', id: ++this.requestId });
    await worker.terminate();
  }
}
