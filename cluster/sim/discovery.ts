// Discovery documents: enough for kubectl and client-node to find pods, logs, events, nodes,
// services, config maps, deployments, replica sets and endpoint slices.
// /version is the emulated minor's (versions.ts).

const verbs = ['create', 'delete', 'get', 'list', 'patch', 'watch'];
export const CORE_V1_RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'v1',
  resources: [
    {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs,
      shortNames: ['po'],
      categories: ['all'],
    },
    { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    {
      name: 'pods/portforward',
      singularName: '',
      namespaced: true,
      kind: 'PodPortForwardOptions',
      verbs: ['create', 'get'],
    },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    {
      name: 'namespaces',
      singularName: 'namespace',
      namespaced: false,
      kind: 'Namespace',
      verbs: ['create', 'get', 'list', 'watch'],
      shortNames: ['ns'],
    },
    {
      name: 'events',
      singularName: 'event',
      namespaced: true,
      kind: 'Event',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['ev'],
    },
    {
      name: 'nodes',
      singularName: 'node',
      namespaced: false,
      kind: 'Node',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['no'],
    },
    {
      name: 'services',
      singularName: 'service',
      namespaced: true,
      kind: 'Service',
      verbs: [...verbs, 'update'],
      shortNames: ['svc'],
      categories: ['all'],
    },
    { name: 'services/status', singularName: '', namespaced: true, kind: 'Service', verbs: ['get', 'patch', 'update'] },
    {
      name: 'configmaps',
      singularName: 'configmap',
      namespaced: true,
      kind: 'ConfigMap',
      verbs: [...verbs, 'deletecollection', 'update'],
      shortNames: ['cm'],
    },
    {
      name: 'serviceaccounts',
      singularName: 'serviceaccount',
      namespaced: true,
      kind: 'ServiceAccount',
      verbs: [...verbs, 'deletecollection', 'update'],
      shortNames: ['sa'],
    },
  ],
};

/** A kind with a status subresource the edge writes (Gateway API CRDs, Ingress). */
const withStatus = (name: string, kind: string, namespaced: boolean, shortNames?: string[]) => [
  {
    name,
    singularName: kind.toLowerCase(),
    namespaced,
    kind,
    verbs: [...verbs, 'deletecollection', 'update'],
    ...(shortNames ? { shortNames } : {}),
  },
  { name: `${name}/status`, singularName: '', namespaced, kind, verbs: ['get', 'patch', 'update'] },
];

const workload = (name: string, kind: string, shortNames: string[]) => [
  {
    name,
    singularName: kind.toLowerCase(),
    namespaced: true,
    kind,
    verbs: [...verbs, 'deletecollection', 'update'],
    shortNames,
    categories: ['all'],
  },
  { name: `${name}/status`, singularName: '', namespaced: true, kind, verbs: ['get', 'patch', 'update'] },
  {
    name: `${name}/scale`,
    singularName: '',
    namespaced: true,
    group: 'autoscaling',
    version: 'v1',
    kind: 'Scale',
    verbs: ['get', 'patch', 'update'],
  },
];

/** /apis/<group>/v1 for the groups the sim serves. */
export const GROUP_RESOURCES: Record<string, unknown> = {
  apps: {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'apps/v1',
    resources: [...workload('deployments', 'Deployment', ['deploy']), ...workload('replicasets', 'ReplicaSet', ['rs'])],
  },
  'gateway.networking.k8s.io': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'gateway.networking.k8s.io/v1',
    resources: [
      ...withStatus('gatewayclasses', 'GatewayClass', false, ['gc']),
      ...withStatus('gateways', 'Gateway', true, ['gtw']),
      ...withStatus('httproutes', 'HTTPRoute', true),
    ],
  },
  'networking.k8s.io': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'networking.k8s.io/v1',
    resources: [
      ...withStatus('ingresses', 'Ingress', true, ['ing']),
      ...withStatus('ingressclasses', 'IngressClass', false).slice(0, 1),
    ],
  },
  'rbac.authorization.k8s.io': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'rbac.authorization.k8s.io/v1',
    resources: [
      ...withStatus('clusterroles', 'ClusterRole', false).slice(0, 1),
      ...withStatus('clusterrolebindings', 'ClusterRoleBinding', false).slice(0, 1),
    ],
  },
  'discovery.k8s.io': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'discovery.k8s.io/v1',
    resources: [
      {
        name: 'endpointslices',
        singularName: 'endpointslice',
        namespaced: true,
        kind: 'EndpointSlice',
        verbs: ['get', 'list', 'watch'],
      },
    ],
  },
};

export function apiVersions(host: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }],
  };
}

const group = (name: string) => ({
  name,
  versions: [{ groupVersion: `${name}/v1`, version: 'v1' }],
  preferredVersion: { groupVersion: `${name}/v1`, version: 'v1' },
});
export const API_GROUPS = { kind: 'APIGroupList', apiVersion: 'v1', groups: Object.keys(GROUP_RESOURCES).map(group) };

// kubectl validates with OpenAPI v3: when the operation takes `fieldValidation`, it leaves
// validation to the server (which checks what it needs) instead of downloading full schemas.
const fieldValidation = [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }];
const operation = (group: string, kind: string, action: string) => ({
  operationId: `${action}${kind}`,
  parameters: fieldValidation,
  responses: { '200': { description: 'OK' } },
  'x-kubernetes-action': action,
  'x-kubernetes-group-version-kind': { group, version: 'v1', kind },
});
const writable = (prefix: string, group: string, resource: string, kind: string) => ({
  [`${prefix}/namespaces/{namespace}/${resource}`]: { post: operation(group, kind, 'post') },
  [`${prefix}/namespaces/{namespace}/${resource}/{name}`]: {
    patch: operation(group, kind, 'patch'),
    put: operation(group, kind, 'put'),
  },
});
/** A cluster-scoped kind's create, patch and replace. */
const writableCluster = (prefix: string, group: string, resource: string, kind: string) => ({
  [`${prefix}/${resource}`]: { post: operation(group, kind, 'post') },
  [`${prefix}/${resource}/{name}`]: { patch: operation(group, kind, 'patch'), put: operation(group, kind, 'put') },
});
const GATEWAY = 'gateway.networking.k8s.io';
const OPENAPI_PATHS: Record<string, Record<string, unknown>> = {
  'api/v1': {
    ...writable('/api/v1', '', 'serviceaccounts', 'ServiceAccount'),
    ...writable('/api/v1', '', 'pods', 'Pod'),
    ...writable('/api/v1', '', 'services', 'Service'),
    ...writable('/api/v1', '', 'configmaps', 'ConfigMap'),
    '/api/v1/namespaces': { post: operation('', 'Namespace', 'post') },
    // kubectl looks for a patch operation of the kind before it leaves validation to the server.
    '/api/v1/namespaces/{name}': { patch: operation('', 'Namespace', 'patch') },
  },
  'apis/apps/v1': {
    ...writable('/apis/apps/v1', 'apps', 'deployments', 'Deployment'),
    ...writable('/apis/apps/v1', 'apps', 'replicasets', 'ReplicaSet'),
  },
  'apis/discovery.k8s.io/v1': {},
  [`apis/${GATEWAY}/v1`]: {
    ...writableCluster(`/apis/${GATEWAY}/v1`, GATEWAY, 'gatewayclasses', 'GatewayClass'),
    ...writable(`/apis/${GATEWAY}/v1`, GATEWAY, 'gateways', 'Gateway'),
    ...writable(`/apis/${GATEWAY}/v1`, GATEWAY, 'httproutes', 'HTTPRoute'),
  },
  'apis/networking.k8s.io/v1': {
    ...writable('/apis/networking.k8s.io/v1', 'networking.k8s.io', 'ingresses', 'Ingress'),
    ...writableCluster('/apis/networking.k8s.io/v1', 'networking.k8s.io', 'ingressclasses', 'IngressClass'),
  },
  'apis/rbac.authorization.k8s.io/v1': {
    ...writableCluster(
      '/apis/rbac.authorization.k8s.io/v1',
      'rbac.authorization.k8s.io',
      'clusterroles',
      'ClusterRole',
    ),
    ...writableCluster(
      '/apis/rbac.authorization.k8s.io/v1',
      'rbac.authorization.k8s.io',
      'clusterrolebindings',
      'ClusterRoleBinding',
    ),
  },
};
export const OPENAPI_V3_ROOT = {
  paths: Object.fromEntries(
    Object.keys(OPENAPI_PATHS).map((p) => [p, { serverRelativeURL: `/openapi/v3/${p}?hash=termlab-sim-3` }]),
  ),
};
export function openApiV3(path: string, gitVersion: string) {
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: gitVersion },
    paths: OPENAPI_PATHS[path] ?? {},
    components: { schemas: {} },
  };
}
