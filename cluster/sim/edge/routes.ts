// The dynamic configuration each of Traefik's two Kubernetes providers builds from its informers' caches
// (traefik v3.7.13 pkg/provider/kubernetes/gateway and .../ingress): routers (host, path) and the servers
// behind each. Pure: the caches in, the routes out.
import { createHash } from 'node:crypto';

export interface Server {
  /** The endpoint's pod: the sim's pods all have 127.0.0.1, so the pod, not the address, tells them apart. */
  podUid: string;
  /** Where the edge connects: the pod's published port on the node (the sim has no pod network). */
  host: string;
  port: number;
  /** ServiceAddr / ServiceURL in the access log: the address the edge dialled. */
  addr: string;
  url: string;
}

export interface Backend {
  /** ServiceName in the access log. */
  name: string;
  weight: number;
  servers: Server[];
  /** A backend Traefik could not load: answered with this status and no body (service.go:336). */
  status?: number;
  /** Round robin position (wrr.go with equal weights). */
  next: number;
}

export interface Route {
  provider: 'kubernetesgateway' | 'kubernetes';
  /** An Ingress's router logs these (accesslog/logger.go:216): namespace, name, Service and its port as written. */
  ingress?: { namespace: string; name: string; service: string; port: string };
  /** RouterName in the access log, with its provider suffix. */
  routerName: string;
  entryPoint: string;
  /** Lower-case hostnames; a leading "*." is a wildcard; empty: any host. */
  hosts: string[];
  pathType: 'Exact' | 'PathPrefix';
  path: string;
  backends: Backend[];
  backendNext: number;
}

export interface Caches {
  gatewayClasses: Map<string, any>;
  gateways: Map<string, any>;
  httpRoutes: Map<string, any>;
  ingresses: Map<string, any>;
  services: Map<string, any>;
  endpointSlices: Map<string, any>;
  pods: Map<string, any>;
}

export const GATEWAY_CONTROLLER = 'traefik.io/gateway-controller';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** provider.Normalize (pkg/provider/configuration.go:126): runs of non-alphanumerics become one "-". */
export function normalize(name: string): string {
  return name
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join('-');
}

/** makeRouterName (gateway/kubernetes.go:1229): a readable label and `%.10x` of a SHA-256, its first 10 bytes in hex. */
function gatewayRouterName(route: any, gateway: any, ep: string, index: number, rule: string): string {
  const { namespace, name } = route.metadata;
  const label = normalize(
    `httproute-${namespace}-${name}-gw-${gateway.metadata.namespace}-${gateway.metadata.name}-ep-${ep}-${index}`,
  );
  const h = createHash('sha256');
  for (const c of [namespace, name, gateway.metadata.namespace, gateway.metadata.name, ep, String(index)])
    h.update(`${Buffer.byteLength(c)}:${c}`);
  h.update(rule);
  return `${label}-${h.digest('hex').slice(0, 20)}@kubernetesgateway`;
}

/** The pod's published node port for a container port (the scheduler writes hostPort into the pod's spec). */
function hostPortOf(pod: any, containerPort: number): number | undefined {
  for (const c of [...(pod?.spec?.initContainers ?? []), ...(pod?.spec?.containers ?? [])])
    for (const p of c.ports ?? []) if (p.containerPort === containerPort && p.hostPort) return p.hostPort;
  return undefined;
}

/**
 * The servers of a Service port from its EndpointSlices: the slice port matched by the Service port's name
 * (gateway/kubernetes.go:992, ingress/kubernetes.go:700), each endpoint kept when `keep` says so.
 * Null when the Service has no slice at all.
 */
function serversOf(
  c: Caches,
  namespace: string,
  service: string,
  portName: string,
  keep: (conditions: any) => boolean,
): Server[] | null {
  const servers: Server[] = [];
  const seen = new Set<string>();
  let slices = 0;
  for (const slice of c.endpointSlices.values()) {
    if (slice.metadata.namespace !== namespace || slice.metadata.labels?.[SERVICE_NAME_LABEL] !== service) continue;
    slices++;
    const port = (slice.ports ?? []).find((p: any) => (p.name ?? '') === portName)?.port;
    if (!port) continue;
    for (const ep of slice.endpoints ?? []) {
      if (!keep(ep.conditions ?? {})) continue;
      const uid = ep.targetRef?.uid;
      if (!uid || seen.has(uid)) continue;
      seen.add(uid);
      const hostPort = hostPortOf(c.pods.get(uid), port);
      if (!hostPort) continue;
      const addr = `127.0.0.1:${hostPort}`;
      servers.push({ podUid: uid, host: '127.0.0.1', port: hostPort, addr, url: `http://${addr}` });
    }
  }
  return slices ? servers : null;
}

/** Gateway provider (gateway/kubernetes.go:1003): only endpoints whose ready condition is true. */
const gatewayKeeps = (conditions: any) => conditions.ready === true;
/**
 * Ingress provider (ingress/kubernetes.go:714-729): serving endpoints (nil counts as true), a terminating one
 * "fenced"; wrr.go:229-245 never picks a fenced server, so it is left out here.
 */
const ingressKeeps = (conditions: any) => conditions.serving !== false && conditions.terminating !== true;

/** HTTPRoutes attached to Traefik's Gateways: one route per rule and path match, with its listener's entry point. */
export function gatewayRoutes(c: Caches, entryPoints: Map<string, number>): Route[] {
  const routes: Route[] = [];
  const epByPort = new Map([...entryPoints].map(([name, port]) => [port, name]));
  for (const gw of c.gateways.values()) {
    const cls = c.gatewayClasses.get(`/${gw.spec.gatewayClassName}`);
    if (cls?.spec?.controllerName !== GATEWAY_CONTROLLER) continue;
    for (const listener of gw.spec.listeners ?? []) {
      const ep = epByPort.get(listener.port);
      if (!ep || listener.protocol !== 'HTTP') continue;
      const from = listener.allowedRoutes?.namespaces?.from ?? 'Same';
      for (const route of c.httpRoutes.values()) {
        const ns = route.metadata.namespace;
        if (from === 'Same' && ns !== gw.metadata.namespace) continue;
        const attached = (route.spec.parentRefs ?? []).some(
          (p: any) =>
            (p.kind ?? 'Gateway') === 'Gateway' &&
            p.name === gw.metadata.name &&
            (p.namespace ?? ns) === gw.metadata.namespace &&
            (!p.sectionName || p.sectionName === listener.name) &&
            (!p.port || p.port === listener.port),
        );
        if (!attached) continue;
        const hosts = ((route.spec.hostnames ?? []) as string[]).map((h) => h.toLowerCase());
        for (const [i, rule] of ((route.spec.rules ?? [{}]) as any[]).entries()) {
          const matches = rule.matches?.length ? rule.matches : [{ path: { type: 'PathPrefix', value: '/' } }];
          for (const match of matches) {
            const pathType = match.path?.type === 'Exact' ? 'Exact' : 'PathPrefix';
            const path = match.path?.value ?? '/';
            const ruleText = `${hosts.length ? `(${hosts.map((h) => `Host(\`${h}\`)`).join(' || ')}) && ` : ''}${pathType}(\`${path}\`)`;
            const routerName = gatewayRouterName(route, gw, ep, i, ruleText);
            const backends: Backend[] = ((rule.backendRefs ?? []) as any[]).map((ref, bi) => {
              // httproute.go:286: "%s-svc-%s-%s-%d" (router, namespace, name, backend index).
              const name = `${routerName.replace(/@.*$/, '')}-svc-${ref.namespace ?? ns}-${ref.name}-${bi}`;
              const backend: Backend = {
                name: `${name}@kubernetesgateway`,
                weight: ref.weight ?? 1,
                servers: [],
                next: 0,
              };
              const svc = c.services.get(`${ref.namespace ?? ns}/${ref.name}`);
              const svcPort = (svc?.spec?.ports ?? []).find((p: any) => p.port === ref.port);
              const servers = svcPort
                ? serversOf(c, ref.namespace ?? ns, ref.name, svcPort.name ?? '', gatewayKeeps)
                : null;
              // A missing Service or no EndpointSlice: the backend fails to load (httproute.go:242, Status 500).
              if (servers === null) backend.status = 500;
              else backend.servers = servers;
              return backend;
            });
            routes.push({
              provider: 'kubernetesgateway',
              routerName,
              entryPoint: ep,
              hosts,
              pathType,
              path,
              backends,
              backendNext: 0,
            });
          }
        }
      }
    }
  }
  return sortRoutes(routes);
}

/** Ingresses of the class: one route per rule path; one whose Service has no serving endpoint is skipped (ingress/kubernetes.go:387). */
export function ingressRoutes(c: Caches, ingressClass: string | null, entryPoints: Map<string, number>): Route[] {
  const routes: Route[] = [];
  for (const ing of c.ingresses.values()) {
    const cls = ing.spec.ingressClassName ?? ing.metadata.annotations?.['kubernetes.io/ingress.class'];
    if (ingressClass !== null && cls !== ingressClass) continue;
    const ns = ing.metadata.namespace;
    for (const rule of ing.spec.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const ref = p.backend?.service;
        const svc = c.services.get(`${ns}/${ref?.name}`);
        const svcPort = (svc?.spec?.ports ?? []).find((sp: any) =>
          ref?.port?.number !== undefined ? sp.port === ref.port.number : sp.name === ref?.port?.name,
        );
        if (!svcPort) continue;
        const servers = serversOf(c, ns, ref.name, svcPort.name ?? '', ingressKeeps) ?? [];
        if (!servers.length) continue;
        const host = (rule.host ?? '').toLowerCase();
        const path = p.path ?? '/';
        const key = normalize(`${ns}-${ing.metadata.name}-${host}${path}`).replace(/^-/, '');
        routes.push({
          provider: 'kubernetes',
          routerName: `${key}@kubernetes`,
          ingress: {
            namespace: ns,
            name: ing.metadata.name,
            service: ref.name,
            port: String(ref.port.number ?? ref.port.name),
          },
          // The Ingress provider's routers listen on every entry point.
          entryPoint: [...entryPoints.keys()][0]!,
          hosts: host ? [host] : [],
          pathType: p.pathType === 'Exact' ? 'Exact' : 'PathPrefix',
          path,
          backends: [
            {
              name: `${normalize(`${ns}-${ref.name}-${svcPort.port}`)}@kubernetes`,
              weight: 1,
              servers,
              next: 0,
            },
          ],
          backendNext: 0,
        });
      }
    }
  }
  return sortRoutes(routes);
}

/** Traefik orders routers by priority, by default the rule's length: a host and a longer path first. */
function sortRoutes(routes: Route[]): Route[] {
  const weight = (r: Route) => (r.hosts.length ? 10_000 : 0) + r.path.length + (r.pathType === 'Exact' ? 1 : 0);
  return routes.sort((a, b) => weight(b) - weight(a));
}

/** A fingerprint of what routing depends on: a provider sends a configuration only when it changed (kubernetes.go:232). */
export function fingerprint(routes: Route[]): string {
  return JSON.stringify(
    routes.map((r) => [
      r.routerName,
      r.hosts,
      r.path,
      r.backends.map((b) => [b.name, b.weight, b.status, b.servers.map((s) => s.addr)]),
    ]),
  );
}
