// Finding the edge in front of a route (contract C5): HTTPRoute → its first parentRef's Gateway →
// status.addresses[0] and the listener's port, Host from spec.hostnames[0]; Ingress → its
// status.loadBalancer.ingress[0], port 80, Host from spec.rules[0].host. Traefik fills those only from
// a LoadBalancer Service's status (v3.7.13, gatewayAddresses / updateIngressStatus), so with its NodePort
// Service they stay empty: then the edge is its Service (label app.kubernetes.io/name=traefik), as the
// load pod reaches it inside the cluster anyway, and the observation says which was used.
import { TermlabError } from '../../lib/errors.ts';

type Raw = Record<string, any>;

export const EDGE_LABEL = 'app.kubernetes.io/name=traefik';
export const VIA_KINDS = ['httproute', 'ingress'] as const;
export type ViaKind = (typeof VIA_KINDS)[number];
export interface Via {
  kind: ViaKind;
  name: string;
}

const DNS_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** `--via httproute/NAME` or `--via ingress/NAME` (kubectl's plurals and short names too). */
export function parseVia(value: string): Via {
  const m = /^([a-z.]+)\/(.+)$/.exec(value);
  const kind = m
    ? (
        {
          httproute: 'httproute',
          httproutes: 'httproute',
          'httproute.gateway.networking.k8s.io': 'httproute',
          ingress: 'ingress',
          ingresses: 'ingress',
          ing: 'ingress',
          'ingress.networking.k8s.io': 'ingress',
        } as Record<string, ViaKind>
      )[m[1]!]
    : undefined;
  if (!m || !kind)
    throw new TermlabError('USAGE', `--via: expected httproute/NAME or ingress/NAME, got ${JSON.stringify(value)}`);
  if (m[2]!.length > 253 || !DNS_NAME.test(m[2]!))
    throw new TermlabError('USAGE', `--via ${value}: ${JSON.stringify(m[2])} is not a valid ${kind} name`);
  return { kind, name: m[2]! };
}

/** `--url URL`: an edge termlab cannot read (a cloud load balancer): http(s), no fragment. */
export function parseEdgeUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TermlabError('USAGE', `--url: ${JSON.stringify(value)} is not a URL (e.g. http://lb.example.com)`);
  }
  if (url.protocol !== 'http:')
    throw new TermlabError(
      'USAGE',
      `--url ${value}: only http:// is supported (the load pod speaks plain HTTP/1.1 to the edge)`,
    );
  if (url.hash || url.search || (url.pathname !== '/' && url.pathname !== ''))
    throw new TermlabError('USAGE', `--url ${value}: give the edge's base URL only; the path goes in --path`);
  return url;
}

/** What a route says about its edge and its backend, before the edge's own objects are read. */
export interface RouteFacts {
  via: string;
  /** The Gateway (namespace/name) an HTTPRoute hangs from; null for an Ingress. */
  gateway: { namespace: string; name: string; sectionName: string | null } | null;
  host: string | null;
  /** The Service the route sends to (its first backend), in the route's namespace. */
  backend: { service: string; port: number | null };
}

const edgeError = (message: string, context: Record<string, unknown>) =>
  new TermlabError('EDGE_NOT_FOUND', message, context);

export function routeFacts(via: Via, route: Raw, namespace: string): RouteFacts {
  const what = `${via.kind}/${via.name} in namespace ${namespace}`;
  if (via.kind === 'httproute') {
    const parent = route.spec?.parentRefs?.[0];
    if (!parent?.name)
      throw edgeError(`${what} has no spec.parentRefs: no Gateway carries it, so there is no edge to go through`, {
        via: via.name,
      });
    if (parent.kind && parent.kind !== 'Gateway')
      throw edgeError(`${what}: its first parentRef is a ${parent.kind}, not a Gateway`, { via: via.name });
    const ref = route.spec?.rules?.flatMap((r: Raw) => r.backendRefs ?? [])[0];
    if (!ref?.name || (ref.kind && ref.kind !== 'Service'))
      throw edgeError(`${what} has no Service in spec.rules[].backendRefs: it sends nowhere verify can follow`, {
        via: via.name,
      });
    return {
      via: `${via.kind}/${via.name}`,
      gateway: { namespace: parent.namespace ?? namespace, name: parent.name, sectionName: parent.sectionName ?? null },
      host: route.spec?.hostnames?.[0] ?? null,
      backend: { service: ref.name, port: typeof ref.port === 'number' ? ref.port : null },
    };
  }
  const rule = route.spec?.rules?.[0];
  const backend = rule?.http?.paths?.[0]?.backend?.service ?? route.spec?.defaultBackend?.service;
  if (!backend?.name)
    throw edgeError(`${what} has no backend Service (spec.rules[0].http.paths[0] or spec.defaultBackend)`, {
      via: via.name,
    });
  return {
    via: `${via.kind}/${via.name}`,
    gateway: null,
    host: rule?.host ?? null,
    backend: { service: backend.name, port: typeof backend.port?.number === 'number' ? backend.port.number : null },
  };
}

/** Where the load goes and where the edge's pods are. */
export interface EdgeAddress {
  /** The base URL the load pod is given. */
  target: string;
  /** How it was found, said in the observation and the report. */
  source: string;
  /** The namespace of the edge's pods (their access log), null when unknown. */
  namespace: string | null;
}

/**
 * The edge's address: the route's status when the edge published one, else its Service. On the simulated
 * cluster the Service's NodePort on the node (it routes NodePorts only, as verify's load already uses).
 */
export function edgeAddress(
  via: Via,
  facts: RouteFacts,
  objects: { route: Raw; gateway: Raw | null; service: Raw | null },
  simulated: { hostIP: string } | null,
): EdgeAddress {
  const svc = objects.service;
  const svcPort = svc?.spec?.ports?.[0];
  const ns = facts.gateway?.namespace ?? svc?.metadata?.namespace ?? null;
  const fromService = (why: string): EdgeAddress | null => {
    if (!svc || !svcPort) return null;
    const name = `${svc.metadata?.namespace}/${svc.metadata?.name}`;
    if (simulated && svcPort.nodePort)
      return {
        target: `http://${simulated.hostIP}:${svcPort.nodePort}`,
        source: `${why}: the edge's Service ${name}, NodePort ${svcPort.nodePort} (the simulated cluster routes NodePorts)`,
        namespace: svc.metadata?.namespace ?? ns,
      };
    const ip = svc.spec?.clusterIP;
    if (!ip || ip === 'None') return null;
    return {
      target: `http://${ip}:${svcPort.port}`,
      source: `${why}: the edge's Service ${name}, ClusterIP ${ip}:${svcPort.port}`,
      namespace: svc.metadata?.namespace ?? ns,
    };
  };
  if (via.kind === 'httproute') {
    const gw = objects.gateway;
    const gwName = `${facts.gateway!.namespace}/${facts.gateway!.name}`;
    if (!gw) throw edgeError(`${facts.via}: its parentRef Gateway ${gwName} was not found`, { gateway: gwName });
    const listeners: Raw[] = gw.spec?.listeners ?? [];
    const listener = facts.gateway!.sectionName
      ? listeners.find((l) => l.name === facts.gateway!.sectionName)
      : listeners.find((l) => l.protocol === 'HTTP');
    const address = gw.status?.addresses?.[0]?.value;
    if (address && listener && !simulated)
      return {
        target: `http://${address}:${listener.port}`,
        source: `Gateway ${gwName}'s status.addresses[0]`,
        namespace: ns,
      };
    const found = fromService(
      address
        ? `Gateway ${gwName} has an address, but the simulated cluster routes NodePorts only`
        : `Gateway ${gwName} has no status.addresses`,
    );
    if (found) return found;
    throw edgeError(
      `Gateway ${gwName} has no address (status.addresses is empty) and no Service labelled ${EDGE_LABEL} in namespace ${facts.gateway!.namespace}: verify cannot tell where the edge listens; give --url`,
      { gateway: gwName },
    );
  }
  const lb = objects.route.status?.loadBalancer?.ingress?.[0];
  const address = lb?.ip ?? lb?.hostname;
  if (address && !simulated)
    return { target: `http://${address}:80`, source: `${facts.via}'s status.loadBalancer`, namespace: ns };
  const found = fromService(`${facts.via} has no status.loadBalancer.ingress`);
  if (found) return found;
  throw edgeError(
    `${facts.via} has no status.loadBalancer.ingress (no controller published an address) and no Service labelled ${EDGE_LABEL} was found: give --url`,
    { via: facts.via },
  );
}
