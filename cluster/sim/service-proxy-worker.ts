// The service proxy's data path, in a thread of its own (service-proxy.ts starts it): the kernel's
// half of kube-proxy. It holds the NodePort listeners and the rules the control plane last installed,
// pins each accepted connection to an endpoint and splices the bytes, and keeps the truth of both.
// In the sim's main thread every accept and every chunk waited behind the API server, the
// controllers, the kubelet and the main heap's collections (bench:verify: +13 ms p95 at 1,000
// connections/s); here the data path waits on nothing of theirs, as iptables does not wait on
// kube-proxy. No import but node's and time.ts: bundled alone (runtime.ts bundleOnce).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { wallNow } from './time.ts';

/** One endpoint as installed: where each Service port name leads (null: the pod has no port there). */
export interface RuleEndpoint {
  podUid: string;
  targets: Record<string, { host: string; port: number } | null>;
}

export interface ProxyConnection {
  at: number;
  podUid: string | null;
  result: 'routed' | 'refused' | 'reset';
  nodePort: number;
  clientPort: number;
}

export interface ProxyViewChange {
  /** When the data path had the new rules: connections accepted from then on follow them. */
  at: number;
  /** When the control plane's sync put them in place (kube-proxy's runner): `at` is this and the hand-over. */
  syncedAt: number;
  readyPodUids: string[];
  servingTerminatingPodUids: string[];
}

export interface ServiceRecords {
  connections: ProxyConnection[];
  changes: ProxyViewChange[];
}

export type ToWorker =
  | { type: 'bind'; id: number; port: number; host: string }
  | { type: 'release'; port: number }
  | { type: 'route'; nodePort: number; key: string; portName: string }
  | { type: 'unroute'; nodePort: number }
  /** The Service's rules: `candidates` as categorizeEndpoints chose them. */
  | {
      type: 'rules';
      key: string;
      syncedAt: number;
      candidates: RuleEndpoint[];
      readyPodUids: string[];
      servingTerminatingPodUids: string[];
    }
  | { type: 'truth'; id: number; key: string | null }
  | { type: 'stop'; id: number };

export type FromWorker =
  | { type: 'bound'; id: number; ok: boolean }
  | { type: 'truth'; id: number; records: Record<string, ServiceRecords> }
  | { type: 'stopped'; id: number };

/** Truth kept per Service: enough for minutes of a 1,000 requests/s load. */
const MAX_CONNECTION_RECORDS = 200_000;

const port = parentPort;
if (!port) throw new Error('service-proxy-worker runs as a worker thread of the service proxy');

const listeners = new Map<number, Server>();
const routes = new Map<number, { key: string; portName: string }>();
const rules = new Map<string, RuleEndpoint[]>();
const records = new Map<string, ServiceRecords>();
const sockets = new Set<Socket>();
const send = (message: FromWorker) => port.postMessage(message);

function recordsOf(key: string): ServiceRecords {
  let r = records.get(key);
  if (!r) records.set(key, (r = { connections: [], changes: [] }));
  return r;
}

function record(key: string | undefined, entry: ProxyConnection): void {
  if (key === undefined) return;
  const r = recordsOf(key);
  if (r.connections.length < MAX_CONNECTION_RECORDS) r.connections.push(entry);
}

function bind(id: number, nodePort: number, host: string): void {
  // No Nagle on either leg: small writes would otherwise wait for delayed ACKs (~40 ms), which iptables' NAT never adds.
  const server = createServer({ noDelay: true }, (socket) => accept(nodePort, socket));
  server.once('error', () => send({ type: 'bound', id, ok: false }));
  server.listen({ port: nodePort, host, exclusive: true }, () => {
    // Past the bind, a listener error (none is expected) must not take the sim down.
    server.on('error', (error) => console.error(`service proxy: ${host}:${nodePort}: ${error.message}`));
    listeners.set(nodePort, server);
    send({ type: 'bound', id, ok: true });
  });
}

/** One accepted connection: pick an endpoint, connect, splice; a refusal resets the client. */
function accept(nodePort: number, client: Socket): void {
  const at = wallNow();
  const clientPort = client.remotePort ?? 0;
  sockets.add(client);
  client.on('close', () => sockets.delete(client));
  client.on('error', () => {});
  const route = routes.get(nodePort);
  const key = route?.key;
  const candidates = route ? (rules.get(route.key) ?? []).filter((e) => route.portName in e.targets) : [];
  if (!candidates.length) {
    // iptables REJECTs (ICMP port unreachable: ECONNREFUSED); the sim holds the port open, so it resets.
    record(key, { at, podUid: null, result: 'refused', nodePort, clientPort });
    client.resetAndDestroy();
    return;
  }
  const endpoint = candidates[Math.floor(Math.random() * candidates.length)]!;
  const target = endpoint.targets[route!.portName];
  if (!target) {
    record(key, { at, podUid: endpoint.podUid, result: 'reset', nodePort, clientPort });
    client.resetAndDestroy();
    return;
  }
  client.pause();
  const upstream = connect({ host: target.host, port: target.port, noDelay: true });
  sockets.add(upstream);
  let connected = false;
  upstream.once('connect', () => {
    connected = true;
    record(key, { at, podUid: endpoint.podUid, result: 'routed', nodePort, clientPort });
    splice(client, upstream);
    splice(upstream, client);
    client.resume();
  });
  upstream.on('error', () => {
    // Refused: the pod's process is gone (the sim's portTarget said so at accept time before; the kernel says it now).
    if (!connected) record(key, { at, podUid: endpoint.podUid, result: 'reset', nodePort, clientPort });
    if (!client.destroyed) client.resetAndDestroy();
  });
  upstream.on('close', () => sockets.delete(upstream));
  client.on('error', () => {
    if (!upstream.destroyed) upstream.resetAndDestroy();
  });
  client.on('close', (hadError) => {
    if (!connected) upstream.destroy();
    else if (hadError && !upstream.destroyed) upstream.resetAndDestroy();
  });
}

/** One direction's bytes: what pipe() does for a byte stream (backpressure, the half-close), with fewer listeners per connection. */
function splice(from: Socket, to: Socket): void {
  from.on('data', (chunk) => {
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => from.resume());
  // Ending a socket already gone builds an error nobody reads (a stack trace per connection, when the other
  // side closed first: it had ended itself, allowHalfOpen being off).
  from.on('end', () => {
    if (!to.destroyed && !to.writableEnded) to.end();
  });
}

async function stop(id: number): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await Promise.all(
    [...listeners.values()].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
  listeners.clear();
  send({ type: 'stopped', id });
}

port.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'bind':
      return bind(m.id, m.port, m.host);
    case 'release':
      listeners.get(m.port)?.close();
      listeners.delete(m.port);
      routes.delete(m.port);
      return;
    case 'route':
      recordsOf(m.key);
      routes.set(m.nodePort, { key: m.key, portName: m.portName });
      return;
    case 'unroute':
      routes.delete(m.nodePort);
      return;
    case 'rules':
      rules.set(m.key, m.candidates);
      recordsOf(m.key).changes.push({
        at: wallNow(),
        syncedAt: m.syncedAt,
        readyPodUids: m.readyPodUids,
        servingTerminatingPodUids: m.servingTerminatingPodUids,
      });
      return;
    case 'truth': {
      const keys = m.key === null ? [...records.keys()] : records.has(m.key) ? [m.key] : [];
      return send({ type: 'truth', id: m.id, records: Object.fromEntries(keys.map((k) => [k, records.get(k)!])) });
    }
    case 'stop':
      return void stop(m.id);
  }
});
