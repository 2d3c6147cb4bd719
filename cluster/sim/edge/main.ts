// The simulated cluster's Traefik (image docker.io/library/traefik:v3.7.13, mapped here by cluster/sim/runtime.ts):
// a pod's program that reads the edge's objects through the API like any in-cluster controller, and forwards
// HTTP on its entry points as Traefik v3.7.13 does in what the lesson depends on (docs/simulated-cluster.md,
// "The edge"). Each provider (Gateway API, Ingress) builds its configuration on every informer event and hands
// it to its own throttle (throttle.ts); the entry point routes with what the throttle let through.
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createApi } from '../../../server/kube-api.ts';
import { flushLog, generalLog } from './access-log.ts';
import { EdgeFlagError, parseEdgeArgs } from './flags.ts';
import { handle, type Routing, upstreamAgent } from './forward.ts';
import { Informer } from './informer.ts';
import { type Caches, fingerprint, gatewayRoutes, ingressRoutes, type Route } from './routes.ts';
import { writeGatewayStatuses } from './status.ts';
import { ProviderThrottle } from './throttle.ts';

/** Traefik's graceful shutdown: entryPoints.*.transport.lifeCycle.graceTimeOut, 10 s by default. */
const GRACE_TIMEOUT_MS = 10_000;
/** The sim's in-cluster access: the API server, and a folder with the token and CA (the ServiceAccount mount). */
const SA_DIR_ENV = 'TERMLAB_SA_DIR';
/** containerPort=hostPort,...: where the sim published this pod's ports (no pod network). */
export const HOST_PORTS_ENV = 'TERMLAB_HOST_PORTS';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: ReturnType<typeof parseEdgeArgs>;
  try {
    config = parseEdgeArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof EdgeFlagError) fail(`command traefik error: ${error.message}`);
    throw error;
  }
  const published = new Map(
    (process.env[HOST_PORTS_ENV] ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=').map(Number) as [number, number]),
  );
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const saDir = process.env[SA_DIR_ENV];
  if (!host || !saDir)
    fail(`KUBERNETES_SERVICE_HOST and ${SA_DIR_ENV}: the simulated cluster gives them to the traefik image's pods`);
  const api = createApi({
    server: `https://${host}:${process.env.KUBERNETES_SERVICE_PORT ?? '443'}`,
    tokenFile: join(saDir, 'token'),
    caFile: join(saDir, 'ca.crt'),
  });
  generalLog('INF', 'Traefik version 3.7.13 built on the termlab simulated cluster version=3.7.13');

  const routing: Routing = {
    routes: [],
    // Sorted as the access log's keys are.
    keptHeaders: [...config.keptHeaders].sort(),
    dialTimeoutMs: config.dialTimeoutMs,
    // The sim's stand-in for a pod's IP vanishing: the pod deleted, or its sandbox stopped (the kubelet's
    // PodReadyToStartContainers False once the last container stopped), which on a node is the CNI's teardown.
    vanished: (server) => {
      const pod = caches.pods.get(server.podUid);
      return (
        !pod ||
        (pod.status?.conditions ?? []).some(
          (c: { type?: string; status?: string }) => c.type === 'PodReadyToStartContainers' && c.status === 'False',
        )
      );
    },
  };
  let gatewayLive: Route[] = [];
  let ingressLive: Route[] = [];
  const publish = () => {
    routing.routes = [...gatewayLive, ...ingressLive];
  };
  const gatewayThrottle = new ProviderThrottle<Route[]>(config.throttleMs, (routes) => {
    gatewayLive = routes;
    publish();
  });
  const ingressThrottle = new ProviderThrottle<Route[]>(config.throttleMs, (routes) => {
    ingressLive = routes;
    publish();
  });

  const caches: Caches = {
    gatewayClasses: new Map(),
    gateways: new Map(),
    httpRoutes: new Map(),
    ingresses: new Map(),
    services: new Map(),
    endpointSlices: new Map(),
    pods: new Map(),
  };
  let lastGateway = '';
  let lastIngress = '';
  let building = false;
  let statusWriting = false;
  /** A provider's loop (kubernetes.go:222-250): on an event, build from the caches, send it if it changed. */
  const build = () => {
    building = false;
    if (!informers.every((i) => i.synced)) return;
    if (config.gateway) {
      const routes = gatewayRoutes(caches, config.entryPoints);
      const print = fingerprint(routes);
      if (print !== lastGateway) {
        lastGateway = print;
        gatewayThrottle.offer(routes);
      }
      if (!statusWriting) {
        statusWriting = true;
        void writeGatewayStatuses(api, caches, config.gateway.statusService).finally(() => {
          statusWriting = false;
        });
      }
    }
    if (config.ingress) {
      const routes = ingressRoutes(caches, config.ingress.ingressClass, config.entryPoints);
      const print = fingerprint(routes);
      if (print !== lastIngress) {
        lastIngress = print;
        ingressThrottle.offer(routes);
      }
    }
  };
  const changed = () => {
    if (building) return;
    building = true;
    setImmediate(build);
  };
  // Each informer fills its provider cache in place; any change schedules one build.
  const watch = (path: string, cache: Map<string, any>, byUid = false) =>
    new Informer(api, path, changed, cache, byUid ? (o) => o.metadata.uid : Informer.key);
  const G = '/apis/gateway.networking.k8s.io/v1';
  const informers = [
    watch('/api/v1/services', caches.services),
    watch('/apis/discovery.k8s.io/v1/endpointslices', caches.endpointSlices),
    // The sim's stand-in for a pod network: where each pod's container ports are published.
    watch('/api/v1/pods', caches.pods, true),
    ...(config.gateway
      ? [
          watch(`${G}/gatewayclasses`, caches.gatewayClasses),
          watch(`${G}/gateways`, caches.gateways),
          watch(`${G}/httproutes`, caches.httpRoutes),
        ]
      : []),
    ...(config.ingress ? [watch('/apis/networking.k8s.io/v1/ingresses', caches.ingresses)] : []),
  ];

  const servers: Server[] = [];
  for (const [name, port] of config.entryPoints) {
    const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => handle(routing, req, res));
    // respondingTimeouts: idleTimeout 180 s, readTimeout 60 s (config/static/static_config.go:48-51).
    server.keepAliveTimeout = 180_000;
    server.requestTimeout = 60_000;
    const hostPort = published.get(port) ?? port;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(hostPort, '127.0.0.1', () => resolve());
    });
    generalLog('INF', `Starting provider aggregator entryPointName=${name} address=:${port}`);
    servers.push(server);
  }
  let terminating = false;
  if (config.ping) {
    // The ping handler on the traefik entry point (:8080): 200 OK, 503 once terminating.
    const ping = createServer((req, res) => {
      req.resume();
      const ok = req.url === '/ping' && !terminating;
      res.writeHead(ok ? 200 : req.url === '/ping' ? 503 : 404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(ok ? 'OK' : req.url === '/ping' ? 'Service Unavailable' : '404 page not found\n');
    });
    await new Promise<void>((resolve, reject) => {
      ping.once('error', reject);
      ping.listen(published.get(8080) ?? 8080, '127.0.0.1', () => resolve());
    });
    servers.push(ping);
  }
  for (const informer of informers) await informer.start();
  build();

  const stop = () => {
    if (terminating) return;
    terminating = true;
    generalLog('INF', 'I have to go...');
    generalLog('INF', 'Stopping server gracefully');
    gatewayThrottle.stop();
    ingressThrottle.stop();
    for (const informer of informers) informer.stop();
    // http.Server.Shutdown: stop accepting, close idle connections, let the rest finish within the grace.
    let open = servers.length;
    for (const server of servers)
      server.close(() => {
        if (--open === 0) quit();
      });
    setTimeout(quit, GRACE_TIMEOUT_MS).unref();
  };
  const quit = () => {
    upstreamAgent.destroy();
    api.close();
    generalLog('INF', 'Shutting down');
    flushLog();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => fail(`traefik: ${error instanceof Error ? error.message : String(error)}`));
