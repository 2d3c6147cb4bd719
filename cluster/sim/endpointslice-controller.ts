// The EndpointSlice controller (pkg/controller/endpointslice/endpointslice_controller.go and
// staging/src/k8s.io/endpointslice/reconciler.go, 1.34): for every Service with a selector, one slice
// per set of ports holding an endpoint for each pod that matches, terminating ones included.
import { Controller, isPodReady, keyOf, sameJson, splitKey } from './controller-queue.ts';
import { generateName } from './names.ts';
import type { ObjectRegistry } from './objects.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime } from './time.ts';

const COMPONENT = 'endpointslice-controller';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
/** --max-endpoints-per-slice default. */
const MAX_ENDPOINTS_PER_SLICE = 100;

export class EndpointSliceController extends Controller {
  private readonly objects: ObjectRegistry;
  protected readonly syncHandler = this.syncService;

  constructor(store: Store, objects: ObjectRegistry) {
    super(COMPONENT, store);
    this.objects = objects;
    this.addEventHandler('services', (e) => this.enqueue(e.object));
    // A pod change (or an old label set a pod had) touches the Services selecting it.
    this.addEventHandler('pods', (e) => {
      for (const svc of this.store.list('services', e.object.metadata.namespace!))
        if (selects(svc, e.object)) this.queue.add(keyOf(svc));
      for (const slice of this.store.list('endpointslices', e.object.metadata.namespace!, (s) =>
        ((s.endpoints ?? []) as any[]).some((ep) => ep.targetRef?.uid === e.object.metadata.uid),
      )) {
        const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
        if (service) this.queue.add(`${slice.metadata.namespace}/${service}`);
      }
    });
    // A slice edited or deleted by someone else is put back.
    this.addEventHandler('endpointslices', (e) => {
      const service = e.object.metadata.labels?.[SERVICE_NAME_LABEL];
      if (service && e.object.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY)
        this.queue.add(`${e.object.metadata.namespace}/${service}`);
    });
  }

  private syncService(key: string): void {
    const [namespace, name] = splitKey(key);
    const svc = this.store.get('services', namespace, name);
    const existing = this.store.list(
      'endpointslices',
      namespace,
      (s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY,
    );
    // No Service, or one being deleted, or one without a selector: this controller keeps no slices for it.
    if (!svc || svc.metadata.deletionTimestamp || !svc.spec.selector || svc.spec.type === 'ExternalName') {
      if (!svc) for (const s of existing) this.store.remove('endpointslices', s);
      return;
    }
    const pods = this.store.list('pods', namespace, (p) => selects(svc, p));
    // Endpoints grouped by their resolved ports: one slice per port set (reconciler.go).
    const groups = new Map<string, { ports: any[]; endpoints: any[] }>();
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod)) continue;
      const ports = endpointPorts(svc, pod);
      const portKey = JSON.stringify(ports);
      if (!groups.has(portKey)) groups.set(portKey, { ports, endpoints: [] });
      groups.get(portKey)!.endpoints.push(podToEndpoint(pod, svc));
    }
    const desired: { ports: any[] | null; endpoints: any[] }[] = [];
    for (const { ports, endpoints } of groups.values()) {
      for (let i = 0; i < endpoints.length; i += MAX_ENDPOINTS_PER_SLICE)
        desired.push({ ports, endpoints: endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE) });
    }
    // No endpoints at all: a placeholder slice with no ports and no endpoints.
    if (!desired.length) desired.push({ ports: null, endpoints: [] });
    const unused = [...existing];
    for (const want of desired) {
      const at = unused.findIndex((s) => sameJson(s.ports ?? null, want.ports));
      const slice = at >= 0 ? unused.splice(at, 1)[0] : undefined;
      this.write(svc, slice, want.ports, want.endpoints);
    }
    for (const s of unused) this.store.remove('endpointslices', s);
  }

  private write(svc: KubeObject, current: KubeObject | undefined, ports: any[] | null, endpoints: any[]): void {
    const labels = { ...svc.metadata.labels, [SERVICE_NAME_LABEL]: svc.metadata.name, [MANAGED_BY_LABEL]: MANAGED_BY };
    // Endpoints keep their order in an existing slice; new ones go to the end.
    const order = new Map(((current?.endpoints ?? []) as any[]).map((e, i) => [e.targetRef?.uid, i]));
    endpoints.sort(
      (a, b) =>
        (order.get(a.targetRef.uid) ?? Number.MAX_SAFE_INTEGER) -
          (order.get(b.targetRef.uid) ?? Number.MAX_SAFE_INTEGER) || a.targetRef.name.localeCompare(b.targetRef.name),
    );
    if (current) {
      if (
        sameJson(current.endpoints ?? [], endpoints) &&
        sameJson(current.ports ?? null, ports) &&
        sameJson(current.metadata.labels, labels)
      )
        return;
      const next = structuredClone(current);
      next.metadata.labels = labels;
      next.metadata.annotations = {
        ...next.metadata.annotations,
        'endpoints.kubernetes.io/last-change-trigger-time': apiTime(),
      };
      next.endpoints = endpoints;
      next.ports = ports;
      this.store.update('endpointslices', next);
      return;
    }
    this.objects.createInternal('endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: generateName(`${svc.metadata.name}-`),
        namespace: svc.metadata.namespace,
        uid: '',
        resourceVersion: '',
        creationTimestamp: '',
        generateName: `${svc.metadata.name}-`,
        labels,
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': apiTime() },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: svc.metadata.name,
            uid: svc.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: 'IPv4',
      endpoints,
      ports,
    });
  }
}

const selects = (svc: KubeObject, pod: KubeObject) =>
  Boolean(svc.spec.selector) &&
  Object.entries(svc.spec.selector as Record<string, string>).every(([k, v]) => pod.metadata.labels?.[k] === v);

/** endpointsliceutil.ShouldPodBeInEndpoints(pod, includeTerminating=true): not terminal, has an IP. */
function shouldPodBeInEndpoints(pod: KubeObject): boolean {
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return false;
  return Boolean(pod.status?.podIP || pod.status?.podIPs?.length);
}

/** podToEndpoint (utils.go): serving is the pod's readiness; ready never while terminating. */
function podToEndpoint(pod: KubeObject, svc: KubeObject) {
  const serving = isPodReady(pod);
  const terminating = Boolean(pod.metadata.deletionTimestamp);
  const ready = Boolean(svc.spec.publishNotReadyAddresses) || (serving && !terminating);
  return {
    addresses: [pod.status.podIP],
    conditions: { ready, serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
  };
}

/** getEndpointPorts: each Service port's targetPort resolved on the pod (podutil.FindPort); unresolved ones left out. */
function endpointPorts(svc: KubeObject, pod: KubeObject): any[] {
  const ports: any[] = [];
  for (const sp of (svc.spec.ports ?? []) as any[]) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    ports.push({
      name: sp.name ?? '',
      port,
      protocol: sp.protocol ?? 'TCP',
      ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
    });
  }
  return ports;
}

function findPort(pod: KubeObject, sp: any): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec.containers as any[]) {
    for (const p of (c.ports ?? []) as any[])
      if (p.name === target && (p.protocol ?? 'TCP') === (sp.protocol ?? 'TCP')) return p.containerPort;
  }
  return undefined;
}
