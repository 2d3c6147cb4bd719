// verify's door to the edge: read the route named by --via, its Gateway and the edge's Service and
// pods (harness/edge/find.ts decides from them), or take --url as an edge nothing can be read from.
import { TermlabError } from '../../lib/errors.ts';
import { type Cluster, isNotFound, withRetry } from '../kube/index.ts';
import { getText } from '../kube/http.ts';
import { EDGE_LABEL, edgeAddress, parseEdgeUrl, parseVia, routeFacts, type Via } from '../edge/find.ts';
import type { EdgePlan } from '../observation/verification.ts';
import { needing } from './kube.ts';

type Raw = Record<string, any>;

async function get(cluster: Cluster, path: string, query: Record<string, string> = {}): Promise<Raw | null> {
  try {
    return JSON.parse(await withRetry(cluster, `GET ${path}`, () => getText(cluster, path, query))) as Raw;
  } catch (error) {
    if (isNotFound(error) || (error as { context?: { status?: number } })?.context?.status === 404) return null;
    throw error;
  }
}

const ROUTE_PATH: Record<Via['kind'], (ns: string, name: string) => string> = {
  httproute: (ns, name) => `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${name}`,
  ingress: (ns, name) => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${name}`,
};

/** The edge of --via or --url, as the plan and the observation keep it; null without either. */
export async function findEdge(
  cluster: Cluster,
  options: { via?: string; url?: string; namespace: string; hostIP: () => Promise<string> },
  simulated: boolean,
): Promise<EdgePlan | null> {
  if (options.via !== undefined && options.url !== undefined)
    throw new TermlabError('USAGE', '--via and --url: give one (--url is for an edge termlab cannot read)');
  if (options.url !== undefined) {
    const url = parseEdgeUrl(options.url);
    return {
      via: null,
      url: url.origin,
      target: url.origin,
      host: null,
      source: '--url: an edge termlab cannot read (no access log): causes from the client side and the pods only',
      gateway: null,
      backend: null,
      namespace: null,
    };
  }
  if (options.via === undefined) return null;
  const via = parseVia(options.via);
  const ns = options.namespace;
  const route = await needing('get', `${via.kind === 'httproute' ? 'httproutes' : 'ingresses'}`, ns, () =>
    get(cluster, ROUTE_PATH[via.kind](ns, via.name)),
  );
  if (!route)
    throw new TermlabError('EDGE_NOT_FOUND', `--via ${via.kind}/${via.name}: not found in namespace ${ns}`, {
      via: via.name,
      namespace: ns,
    });
  const facts = routeFacts(via, route, ns);
  const gateway = facts.gateway
    ? await needing('get', 'gateways', facts.gateway.namespace, () =>
        get(
          cluster,
          `/apis/gateway.networking.k8s.io/v1/namespaces/${facts.gateway!.namespace}/gateways/${facts.gateway!.name}`,
        ),
      )
    : null;
  // The edge's own Service: in the Gateway's namespace, or (an Ingress names none) wherever it runs.
  const services = facts.gateway
    ? await needing('list', 'services', facts.gateway.namespace, () =>
        get(cluster, `/api/v1/namespaces/${facts.gateway!.namespace}/services`, { labelSelector: EDGE_LABEL }),
      )
    : await needing('list', 'services', '(all namespaces)', () =>
        get(cluster, '/api/v1/services', { labelSelector: EDGE_LABEL }),
      );
  const service = (services?.items as Raw[] | undefined)?.[0] ?? null;
  const address = edgeAddress(
    via,
    facts,
    { route, gateway, service },
    simulated ? { hostIP: await options.hostIP() } : null,
  );
  return {
    via: facts.via,
    url: null,
    target: address.target,
    host: facts.host,
    source: address.source,
    gateway: facts.gateway ? `${facts.gateway.namespace}/${facts.gateway.name}` : null,
    backend: facts.backend,
    namespace: address.namespace,
  };
}
