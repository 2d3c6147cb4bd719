// Discovery documents: enough for kubectl and client-node to find pods, logs, events and nodes.
export const VERSION = {
  major: '1', minor: '34', gitVersion: 'v1.34.0-termlab-sim', gitCommit: '', gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z', goVersion: 'n/a', compiler: 'n/a', platform: `${process.platform}/${process.arch}`,
};

const verbs = ['create', 'delete', 'get', 'list', 'patch', 'watch'];
export const CORE_V1_RESOURCES = {
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1',
  resources: [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs, shortNames: ['po'], categories: ['all'] },
    { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['create', 'get', 'list', 'watch'], shortNames: ['ns'] },
    { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['get', 'list', 'watch'], shortNames: ['ev'] },
    { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['get', 'list', 'watch'], shortNames: ['no'] },
  ],
};

export function apiVersions(host: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }] };
}

export const API_GROUPS = { kind: 'APIGroupList', apiVersion: 'v1', groups: [] };

// kubectl validates with OpenAPI v3: when the operation takes `fieldValidation`, it leaves
// validation to the server (which checks what it needs) instead of downloading full schemas.
const gvk = (kind: string) => ({ group: '', version: 'v1', kind });
const fieldValidation = [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }];
const operation = (kind: string, action: string) => ({
  operationId: `${action}CoreV1Namespaced${kind}`, parameters: fieldValidation, responses: { '200': { description: 'OK' } },
  'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk(kind),
});
export const OPENAPI_V3_ROOT = { paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=termlab-sim-1' } } };
export const OPENAPI_V3_CORE = {
  openapi: '3.0.0',
  info: { title: 'Kubernetes', version: VERSION.gitVersion },
  paths: {
    '/api/v1/namespaces/{namespace}/pods': { post: operation('Pod', 'post') },
    '/api/v1/namespaces/{namespace}/pods/{name}': { patch: operation('Pod', 'patch'), put: operation('Pod', 'put') },
    '/api/v1/namespaces': { post: operation('Namespace', 'post') },
  },
  components: { schemas: {} },
};
