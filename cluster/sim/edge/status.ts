// The statuses Traefik's Gateway provider writes as it loads the configuration (gateway/kubernetes.go):
// GatewayClass Accepted; Gateway Accepted and Programmed, its listeners, and its addresses from
// statusAddress.service: only that Service's status.loadBalancer.ingress (gatewayAddresses, kubernetes.go:797-843),
// so with the manifest's NodePort Service the Gateway has NO address, as on the real node. HTTPRoute parents.
// Ingress status (publishedService, ingress/kubernetes.go:506-533): a NodePort Service gives the nodes'
// ExternalIP addresses; the sim's node, like the real one, has none, so nothing is written.
import type { Api } from '../../../server/kube-api.ts';
import { GATEWAY_CONTROLLER, type Caches } from './routes.ts';

const GROUP = 'gateway.networking.k8s.io';

function condition(type: string, generation: number, reason = type, status = 'True', message = '') {
  return {
    type,
    status,
    reason,
    message,
    observedGeneration: generation,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/** Conditions compared without their transition times: a status is rewritten only when it says something new. */
function same(a: unknown, b: unknown): boolean {
  const strip = (v: unknown) => JSON.stringify(v, (k, x) => (k === 'lastTransitionTime' ? undefined : x));
  return strip(a) === strip(b);
}

async function put(api: Api, path: string, object: any, status: unknown): Promise<void> {
  if (same(object.status, status)) return;
  const body = { ...object, status, metadata: { ...object.metadata, resourceVersion: undefined } };
  await api.call('PUT', `${path}/status`, body).catch(() => {});
}

export async function writeGatewayStatuses(
  api: Api,
  c: Caches,
  statusService: { name: string; namespace: string } | null,
): Promise<void> {
  const mine = new Set<string>();
  for (const cls of c.gatewayClasses.values()) {
    if (cls.spec?.controllerName !== GATEWAY_CONTROLLER) continue;
    mine.add(cls.metadata.name);
    const g = cls.metadata.generation ?? 1;
    await put(api, `/apis/${GROUP}/v1/gatewayclasses/${cls.metadata.name}`, cls, {
      conditions: [condition('Accepted', g, 'Accepted', 'True', 'Handled by Traefik controller')],
    });
  }
  const svc = statusService && c.services.get(`${statusService.namespace}/${statusService.name}`);
  const addresses = ((svc?.status?.loadBalancer?.ingress ?? []) as any[]).map((a) =>
    a.ip ? { type: 'IPAddress', value: a.ip } : { type: 'Hostname', value: a.hostname },
  );
  for (const gw of c.gateways.values()) {
    if (!mine.has(gw.spec.gatewayClassName)) continue;
    const g = gw.metadata.generation ?? 1;
    const ns = gw.metadata.namespace;
    const listeners = ((gw.spec.listeners ?? []) as any[]).map((l) => ({
      name: l.name,
      supportedKinds: [
        { group: GROUP, kind: 'HTTPRoute' },
        { group: GROUP, kind: 'GRPCRoute' },
      ],
      attachedRoutes: [...c.httpRoutes.values()].filter((r) =>
        (r.spec.parentRefs ?? []).some(
          (p: any) =>
            p.name === gw.metadata.name &&
            (p.namespace ?? r.metadata.namespace) === ns &&
            (!p.sectionName || p.sectionName === l.name),
        ),
      ).length,
      conditions: [condition('Accepted', g), condition('ResolvedRefs', g), condition('Programmed', g)],
    }));
    await put(api, `/apis/${GROUP}/v1/namespaces/${ns}/gateways/${gw.metadata.name}`, gw, {
      ...(addresses.length ? { addresses } : {}),
      conditions: [
        condition('Accepted', g, 'Accepted', 'True', 'Gateway successfully scheduled'),
        condition('Programmed', g, 'Programmed', 'True', 'Gateway successfully scheduled'),
      ],
      listeners,
    });
  }
  for (const route of c.httpRoutes.values()) {
    const g = route.metadata.generation ?? 1;
    const parents = ((route.spec.parentRefs ?? []) as any[])
      .filter((p) => {
        const gw = c.gateways.get(`${p.namespace ?? route.metadata.namespace}/${p.name}`);
        return gw && mine.has(gw.spec.gatewayClassName);
      })
      .map((p) => {
        const missing = ((route.spec.rules ?? []) as any[])
          .flatMap((r) => r.backendRefs ?? [])
          .find((b: any) => !c.services.has(`${b.namespace ?? route.metadata.namespace}/${b.name}`));
        return {
          parentRef: { group: GROUP, kind: 'Gateway', ...p },
          controllerName: GATEWAY_CONTROLLER,
          conditions: [
            condition('Accepted', g, 'Accepted'),
            missing
              ? condition(
                  'ResolvedRefs',
                  g,
                  'BackendNotFound',
                  'False',
                  `Cannot load HTTPBackendRef ${route.metadata.namespace}/${missing.name}`,
                )
              : condition('ResolvedRefs', g, 'ResolvedRefs'),
          ],
        };
      });
    if (!parents.length) continue;
    await put(
      api,
      `/apis/${GROUP}/v1/namespaces/${route.metadata.namespace}/httproutes/${route.metadata.name}`,
      route,
      { parents },
    );
  }
}
