// The real kubectl against the simulated cluster's edge objects: the edge's manifest (Namespace, ServiceAccount,
// RBAC, Deployment, Service, GatewayClass, Gateway, IngressClass), an HTTPRoute and an Ingress, applied, read,
// applied again (kubectl's patch path), refused when a field is wrong, and deleted.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../lib/package-root.ts';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { hasKubectl, runKubectl } from '../support/kubectl.ts';

if (!hasKubectl) console.warn('kubectl not found: skipping the kubectl edge suite (CI installs it)');

let sim: SimCluster;
let env: NodeJS.ProcessEnv;
let dir: string;

const kubectl = (args: string[]) => runKubectl(env, args, 60_000);

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
spec:
  parentRefs: [{ name: edge, namespace: termlab-edge }]
  hostnames: [web.example]
  rules:
    - backendRefs: [{ name: web, port: 80 }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  ingressClassName: traefik
  rules:
    - host: web.example
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: { service: { name: web, port: { number: 80 } } }
`;

describe.skipIf(!hasKubectl)('kubectl against the simulated cluster: the edge objects', () => {
  beforeAll(async () => {
    sim = await startSimCluster();
    dir = mkdtempSync(join(tmpdir(), 'termlab-kubectl-edge-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('applies the edge manifest and the routes, twice, and reads them back', async () => {
    const manifest = packagePath('manifests/edge/traefik.yaml');
    // The manifest's nodePort may be taken on this machine by another sim: the objects are what is tested here.
    const first = await kubectl(['apply', '-f', manifest]);
    const created = first.out + first.err;
    for (const made of [
      'namespace/termlab-edge',
      'serviceaccount/traefik',
      'clusterrole.rbac.authorization.k8s.io/termlab-edge-traefik',
      'clusterrolebinding.rbac.authorization.k8s.io/termlab-edge-traefik',
      'deployment.apps/traefik',
      'gatewayclass.gateway.networking.k8s.io/traefik',
      'gateway.gateway.networking.k8s.io/edge',
      'ingressclass.networking.k8s.io/traefik',
    ])
      expect(created).toContain(`${made} created`);
    const routes = await kubectl(['apply', '-f', join(dir, 'routes.yaml')]);
    expect(routes.err).toBe('');
    expect(routes.out).toContain('httproute.gateway.networking.k8s.io/web created');
    expect(routes.out).toContain('ingress.networking.k8s.io/web created');

    const again = await kubectl(['apply', '-f', join(dir, 'routes.yaml')]);
    expect(again.err).toBe('');
    expect(again.out).toContain('httproute.gateway.networking.k8s.io/web unchanged');
    expect(again.out).toContain('ingress.networking.k8s.io/web unchanged');

    const got = await kubectl(['get', 'gateway', '-n', 'termlab-edge', 'edge', '-o', 'json']);
    expect(got.code).toBe(0);
    const gateway = JSON.parse(got.out);
    expect(gateway.spec.listeners[0]).toMatchObject({ name: 'web', port: 8000, protocol: 'HTTP' });
    // The CRD's default status until the controller writes one.
    expect(gateway.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual([
      'Accepted=Unknown',
      'Programmed=Unknown',
    ]);
    const classes = await kubectl(['get', 'gatewayclass', 'traefik', '-o', 'jsonpath={.spec.controllerName}']);
    expect(classes.out).toBe('traefik.io/gateway-controller');
    const ing = await kubectl(['get', 'ingress', 'web', '-o', 'jsonpath={.spec.rules[0].host}']);
    expect(ing.out).toBe('web.example');
    // kubectl's columns, as the CRDs' printer columns and the API server's printers give them.
    const table = await kubectl(['get', 'gateway', '-n', 'termlab-edge']);
    expect(table.out.split('\n')[0]).toMatch(/^NAME\s+CLASS\s+ADDRESS\s+PROGRAMMED\s+AGE$/);
    expect(table.out.split('\n')[1]).toMatch(/^edge\s+traefik\s+Unknown\s+\d+s$/);
    const ingTable = await kubectl(['get', 'ingress']);
    expect(ingTable.out.split('\n')[1]).toMatch(/^web\s+traefik\s+web\.example\s+80\s+\d+s$/);
  });

  it('changes a route with apply, bumping its generation, and deletes it', async () => {
    writeFileSync(join(dir, 'route2.yaml'), ROUTES.split('---')[0]!.replace('web.example', 'other.example'));
    const changed = await kubectl(['apply', '-f', join(dir, 'route2.yaml')]);
    expect(changed.out).toContain('httproute.gateway.networking.k8s.io/web configured');
    const route = JSON.parse((await kubectl(['get', 'httproute', 'web', '-o', 'json'])).out);
    expect(route.spec.hostnames).toEqual(['other.example']);
    expect(route.metadata.generation).toBe(2);
    const gone = await kubectl(['delete', 'httproute', 'web']);
    expect(gone.out).toContain('httproute.gateway.networking.k8s.io "web" deleted');
    const cls = await kubectl(['delete', 'ingressclass', 'traefik']);
    expect(cls.out).toContain('ingressclass.networking.k8s.io "traefik" deleted');
  });

  it("takes kubectl's typed creates (protobuf bodies) of an Ingress and a ServiceAccount", async () => {
    const ing = await kubectl(['create', 'ingress', 'typed', '--class=traefik', '--rule=typed.example/*=web:80']);
    expect(ing.err).toBe('');
    expect(ing.out).toContain('ingress.networking.k8s.io/typed created');
    const rule = await kubectl(['get', 'ingress', 'typed', '-o', 'jsonpath={.spec.rules[0].http.paths[0].pathType}']);
    expect(rule.out).toBe('Prefix');
    const sa = await kubectl(['create', 'serviceaccount', 'typed']);
    expect(sa.out).toContain('serviceaccount/typed created');
  });

  it('refuses an Ingress path without a pathType, naming the field', async () => {
    writeFileSync(join(dir, 'bad.yaml'), ROUTES.split('---')[1]!.replace('pathType: Prefix', 'pathType: Nope'));
    const bad = await kubectl(['apply', '-f', join(dir, 'bad.yaml')]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('spec.rules[0].http.paths[0].pathType');
  });
});
