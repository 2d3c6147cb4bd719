// The kinds the sim serves, with their group and version: one table for routes, discovery, lists and watches.
import type { Resource } from './store.ts';

export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
}

export const RESOURCES: Record<Resource, ResourceInfo> = {
  pods: { group: '', version: 'v1', kind: 'Pod', namespaced: true, shortNames: ['po'] },
  events: { group: '', version: 'v1', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  namespaces: { group: '', version: 'v1', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  nodes: { group: '', version: 'v1', kind: 'Node', namespaced: false, shortNames: ['no'] },
  services: { group: '', version: 'v1', kind: 'Service', namespaced: true, shortNames: ['svc'] },
  deployments: { group: 'apps', version: 'v1', kind: 'Deployment', namespaced: true, shortNames: ['deploy'] },
  replicasets: { group: 'apps', version: 'v1', kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'] },
  endpointslices: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', namespaced: true },
  configmaps: { group: '', version: 'v1', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  // Kept and served, not enforced: the sim admits one token with every right (auth.ts).
  serviceaccounts: { group: '', version: 'v1', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] },
  clusterroles: { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', namespaced: false },
  clusterrolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  // The edge's objects (cluster/sim/edge): the Gateway API's standard channel and networking.k8s.io.
  gatewayclasses: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'GatewayClass',
    namespaced: false,
    shortNames: ['gc'],
  },
  gateways: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'Gateway',
    namespaced: true,
    shortNames: ['gtw'],
  },
  httproutes: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', namespaced: true },
  ingresses: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', namespaced: true, shortNames: ['ing'] },
  ingressclasses: { group: 'networking.k8s.io', version: 'v1', kind: 'IngressClass', namespaced: false },
};

/** The resources the object routes serve (objects-api.ts) beyond pods, events, namespaces and nodes. */
export const EDGE_RESOURCES: Resource[] = [
  'serviceaccounts',
  'clusterroles',
  'clusterrolebindings',
  'gatewayclasses',
  'gateways',
  'httproutes',
  'ingresses',
  'ingressclasses',
];

export const apiVersionOf = (resource: Resource): string => {
  const { group, version } = RESOURCES[resource];
  return group ? `${group}/${version}` : version;
};

export const listKindOf = (resource: Resource): string => `${RESOURCES[resource].kind}List`;
