// manifests/edge/traefik.yaml is contract C1 of issue #42: the node, the simulator and kind install the same
// objects. It parses, and it holds what the contract names, so a change that breaks the others fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EDGE_MANIFEST, EDGE_NODE_PORT, objectsOf } from '../../dev/node/edge.ts';
import { TRAEFIK_IMAGE } from '../../dev/node/traefik.ts';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };
const objects = objectsOf(readFileSync(EDGE_MANIFEST, 'utf8'), EDGE_MANIFEST) as Obj[];
const find = (kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} is not in ${EDGE_MANIFEST}`);
  return found as never as Record<string, any>;
};

describe('the edge manifest (contract C1)', () => {
  it('holds the objects the contract names, namespaced in termlab-edge', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort()).toEqual(
      [
        'ClusterRole//termlab-edge-traefik',
        'ClusterRoleBinding//termlab-edge-traefik',
        'Deployment/termlab-edge/traefik',
        'Gateway/termlab-edge/edge',
        'GatewayClass//traefik',
        'IngressClass//traefik',
        'Namespace//termlab-edge',
        'Service/termlab-edge/traefik',
        'ServiceAccount/termlab-edge/traefik',
      ].sort(),
    );
  });

  it('runs Traefik v3.7.13 with exactly the contract’s arguments', () => {
    const deployment = find('Deployment', 'traefik');
    expect(deployment.spec.replicas).toBe(1);
    const template = deployment.spec.template;
    expect(template.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'traefik' });
    expect(deployment.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'traefik' });
    expect(template.spec.serviceAccountName).toBe('traefik');
    const [container] = template.spec.containers;
    expect(container.image).toBe('docker.io/library/traefik:v3.7.13');
    expect(container.image).toBe(TRAEFIK_IMAGE);
    expect(container.imagePullPolicy).toBe('IfNotPresent');
    expect(container.args).toEqual([
      '--entryPoints.web.address=:8000',
      '--providers.kubernetesgateway',
      '--providers.kubernetesingress',
      '--providers.kubernetesingress.ingressClass=traefik',
      '--providers.kubernetesgateway.statusAddress.service.name=traefik',
      '--providers.kubernetesgateway.statusAddress.service.namespace=termlab-edge',
      '--providers.kubernetesingress.ingressEndpoint.publishedService=termlab-edge/traefik',
      '--accesslog=true',
      '--accesslog.format=json',
      '--accesslog.fields.headers.defaultmode=drop',
      '--accesslog.fields.headers.names.X-Termlab-Request=keep',
      '--ping=true',
      '--log.level=INFO',
      // Nothing calls out from a class cluster or CI: no version check, no usage statistics.
      '--global.checkNewVersion=false',
      '--global.sendAnonymousUsage=false',
    ]);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/ping', port: 8080 });
  });

  it('publishes web on NodePort 30080, port 80 to 8000', () => {
    const service = find('Service', 'traefik');
    expect(service.metadata.namespace).toBe('termlab-edge');
    expect(service.spec.type).toBe('NodePort');
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'traefik' });
    expect(service.spec.ports).toEqual([{ name: 'web', port: 80, targetPort: 8000, nodePort: EDGE_NODE_PORT }]);
    expect(EDGE_NODE_PORT).toBe(30080);
  });

  it('has the GatewayClass, the Gateway edge (listener web, HTTP 8000, routes from all namespaces) and the IngressClass', () => {
    expect(find('GatewayClass', 'traefik').spec).toEqual({ controllerName: 'traefik.io/gateway-controller' });
    const gateway = find('Gateway', 'edge');
    expect(gateway.spec.gatewayClassName).toBe('traefik');
    expect(gateway.spec.listeners).toEqual([
      { name: 'web', protocol: 'HTTP', port: 8000, allowedRoutes: { namespaces: { from: 'All' } } },
    ]);
    expect(find('IngressClass', 'traefik').spec).toEqual({ controller: 'traefik.io/ingress-controller' });
  });

  it('lets Traefik list and watch all its providers start informers for, and update their status', () => {
    const rules = find('ClusterRole', 'termlab-edge-traefik').rules as {
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }[];
    const may = (group: string, resource: string, verb: string) =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    // pkg/provider/kubernetes/{gateway,ingress}/client.go of v3.7.13: every informer it starts.
    const watched: [string, string][] = [
      ['', 'namespaces'],
      ['', 'nodes'],
      ['', 'services'],
      ['', 'secrets'],
      ['', 'configmaps'],
      ['discovery.k8s.io', 'endpointslices'],
      ['networking.k8s.io', 'ingresses'],
      ['networking.k8s.io', 'ingressclasses'],
      ...[
        'gatewayclasses',
        'gateways',
        'httproutes',
        'grpcroutes',
        'tlsroutes',
        'referencegrants',
        'backendtlspolicies',
      ].map((r): [string, string] => ['gateway.networking.k8s.io', r]),
    ];
    for (const [group, resource] of watched)
      for (const verb of ['list', 'watch']) expect(may(group, resource, verb), `${verb} ${resource}`).toBe(true);
    for (const r of ['gatewayclasses', 'gateways', 'httproutes'])
      expect(may('gateway.networking.k8s.io', `${r}/status`, 'update'), r).toBe(true);
    expect(may('networking.k8s.io', 'ingresses/status', 'update')).toBe(true);
    const binding = find('ClusterRoleBinding', 'termlab-edge-traefik');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'traefik', namespace: 'termlab-edge' }]);
  });

  it('names the file when a manifest does not parse', () => {
    expect(() => objectsOf('kind: A\n---\nkind: [unclosed\n', 'broken.yaml')).toThrow(/^broken\.yaml: /);
    expect(() => objectsOf('kind: A\n---\nkind: [unclosed\n', 'broken.yaml')).toThrow(
      expect.objectContaining({ code: 'SETUP_FAILED' }),
    );
  });
});
