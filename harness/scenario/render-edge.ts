// An edge scenario's own objects and settings on top of its rollout's (render-rollout.ts): the route
// that publishes the Service at the edge (an HTTPRoute on the Gateway termlab-edge/edge, or an Ingress
// of class traefik) under a hostname of its own, the app's keep-alive variant (contract C3), and the
// load's keep-alive, method and Host header (contract C4).
import { LAB_KEEPALIVE_ENV, LAB_KEEPALIVE_TIMEOUT_ENV } from '../../server/contract.ts';
import { ENV_LABEL, ownershipLabels } from '../safety/labels.ts';
import { EXPIRES_ANNOTATION } from '../safety/reap-workloads.ts';
import type { EdgeScenario } from './edge.ts';
import { SERVICE_PORT } from './render-rollout.ts';

/** The edge every lab route is published on (manifests/edge/traefik.yaml, contract C1). */
export const EDGE_GATEWAY = { namespace: 'termlab-edge', name: 'edge', listener: 'web' } as const;
/** The edge's own Service in the Gateway's namespace: what the load pod connects to, at port 80 (contract C5). */
export const EDGE_SERVICE = { name: 'traefik', port: 80 } as const;
/** The edge's pods, for their access logs. */
export const EDGE_POD_SELECTOR = 'app.kubernetes.io/name=traefik';
export const INGRESS_CLASS = 'traefik';

/** A hostname no other run's route shares, so routes of parallel runs never collide. */
export const routeHost = (name: string) => `${name}.edge.termlab.test`;

/** Labelled and stamped as the rollout's own objects, so `termlab reap` takes a route a killed run left. */
export function renderRoute(
  scenario: EdgeScenario,
  o: { name: string; owner: string; runId: string; env?: string; expiresAt?: number },
): Record<string, any> {
  const metadata = {
    name: o.name,
    labels: { ...ownershipLabels(o.owner, o.runId, scenario.name), ...(o.env ? { [ENV_LABEL]: o.env } : {}) },
    ...(o.expiresAt ? { annotations: { [EXPIRES_ANNOTATION]: new Date(o.expiresAt).toISOString() } } : {}),
  };
  const host = routeHost(o.name);
  if (scenario.via === 'ingress')
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata,
      spec: {
        ingressClassName: INGRESS_CLASS,
        rules: [
          {
            host,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: o.name, port: { number: SERVICE_PORT } } },
                },
              ],
            },
          },
        ],
      },
    };
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata,
    spec: {
      parentRefs: [{ name: EDGE_GATEWAY.name, namespace: EDGE_GATEWAY.namespace, sectionName: EDGE_GATEWAY.listener }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: o.name, port: SERVICE_PORT }] }],
    },
  };
}

const setEnv = (container: Record<string, any>, values: Record<string, string>) => {
  container.env = [
    ...(container.env ?? []).filter((e: { name: string }) => !(e.name in values)),
    ...Object.entries(values).map(([name, value]) => ({ name, value })),
  ];
};

/** The app's keep-alive variant on the lab container of a pod template (LAB_KEEPALIVE, LAB_KEEPALIVE_TIMEOUT_MS). */
export function withAppKeepAlive(podTemplate: Record<string, any>, scenario: EdgeScenario): Record<string, any> {
  setEnv(podTemplate.spec.containers[0], {
    [LAB_KEEPALIVE_ENV]: scenario.app.keepAlive,
    [LAB_KEEPALIVE_TIMEOUT_ENV]: String(scenario.app.keepAliveTimeoutMs),
  });
  return podTemplate;
}

/** The load through the edge: kept-alive connections, the method, the route's Host (LOAD_KEEPALIVE, LOAD_METHOD, LOAD_HOST). */
export function withEdgeLoad(loadPod: Record<string, any>, scenario: EdgeScenario, host: string): Record<string, any> {
  setEnv(loadPod.spec.containers[0], {
    ...(scenario.load.keepAlive ? { LOAD_KEEPALIVE: '1' } : {}),
    LOAD_METHOD: scenario.load.method,
    LOAD_HOST: host,
  });
  return loadPod;
}
