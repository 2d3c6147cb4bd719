// The edge's objects as the API server keeps them: Gateway API kinds (CRDs with a status subresource, their
// schema's defaults and required fields, sigs.k8s.io/gateway-api config/crd/standard) and networking.k8s.io/v1
// Ingress and IngressClass (pkg/apis/networking/validation), plus the ServiceAccount and RBAC objects the edge's
// manifest carries (kept, not enforced). What is checked is what the lab's manifests could get wrong.
import { canonicalJson } from './names.ts';
import { ApiError } from './status.ts';
import type { KubeObject } from './store.ts';

const GROUP: Record<string, string> = {
  GatewayClass: 'gateway.networking.k8s.io',
  Gateway: 'gateway.networking.k8s.io',
  HTTPRoute: 'gateway.networking.k8s.io',
  Ingress: 'networking.k8s.io',
  IngressClass: 'networking.k8s.io',
  ClusterRole: 'rbac.authorization.k8s.io',
  ClusterRoleBinding: 'rbac.authorization.k8s.io',
};

function invalidField(o: KubeObject, field: string, message: string): ApiError {
  const group = GROUP[o.kind];
  return new ApiError(
    422,
    'Invalid',
    `${o.kind}${group ? `.${group}` : ''} "${o.metadata.name}" is invalid: ${field}: ${message}`,
    {
      name: o.metadata.name,
      kind: o.kind,
      causes: [{ reason: 'FieldValueRequired', message, field }],
    },
  );
}

/** The CRDs' default status before a controller writes one: Unknown, "Waiting for controller". */
function pending(types: string[]) {
  return {
    conditions: types.map((type) => ({
      type,
      status: 'Unknown',
      reason: 'Pending',
      message: 'Waiting for controller',
      lastTransitionTime: '1970-01-01T00:00:00Z',
    })),
  };
}

function validate(o: KubeObject): void {
  const spec = o.spec ?? {};
  switch (o.kind) {
    case 'GatewayClass':
      if (!spec.controllerName) throw invalidField(o, 'spec.controllerName', 'Required value');
      return;
    case 'Gateway':
      if (!spec.gatewayClassName) throw invalidField(o, 'spec.gatewayClassName', 'Required value');
      if (!Array.isArray(spec.listeners) || spec.listeners.length === 0)
        throw invalidField(o, 'spec.listeners', 'Required value');
      for (const [i, l] of (spec.listeners as any[]).entries()) {
        if (!l?.name) throw invalidField(o, `spec.listeners[${i}].name`, 'Required value');
        if (!Number.isInteger(l.port) || l.port < 1 || l.port > 65535)
          throw invalidField(
            o,
            `spec.listeners[${i}].port`,
            `Invalid value: ${JSON.stringify(l.port)}: must be 1-65535`,
          );
        if (!l.protocol) throw invalidField(o, `spec.listeners[${i}].protocol`, 'Required value');
      }
      return;
    case 'HTTPRoute':
      for (const [i, rule] of ((spec.rules ?? []) as any[]).entries())
        for (const [j, ref] of ((rule?.backendRefs ?? []) as any[]).entries()) {
          if (!ref?.name) throw invalidField(o, `spec.rules[${i}].backendRefs[${j}].name`, 'Required value');
          if ((ref.kind ?? 'Service') === 'Service' && !Number.isInteger(ref.port))
            throw invalidField(
              o,
              `spec.rules[${i}].backendRefs[${j}].port`,
              'Required value: port is required when kind is Service',
            );
        }
      return;
    case 'Ingress':
      for (const [i, rule] of ((spec.rules ?? []) as any[]).entries())
        for (const [j, p] of ((rule?.http?.paths ?? []) as any[]).entries()) {
          const at = `spec.rules[${i}].http.paths[${j}]`;
          if (!['Exact', 'Prefix', 'ImplementationSpecific'].includes(p?.pathType))
            throw invalidField(
              o,
              `${at}.pathType`,
              `Unsupported value: ${JSON.stringify(p?.pathType)}: supported values: "Exact", "ImplementationSpecific", "Prefix"`,
            );
          if (!p.backend?.service?.name) throw invalidField(o, `${at}.backend.service.name`, 'Required value');
          const port = p.backend.service.port ?? {};
          if (port.number === undefined && !port.name)
            throw invalidField(o, `${at}.backend.service.port`, 'Required value: port name or number is required');
        }
      return;
    case 'IngressClass':
      if (!spec.controller) throw invalidField(o, 'spec.controller', 'Required value');
      return;
    case 'ClusterRoleBinding':
      if (!o.roleRef?.name) throw invalidField(o, 'roleRef.name', 'Required value');
      return;
  }
}

/** Defaults, validation, generation and status for a create (no `old`) or an update of the whole object. */
export function prepareEdgeObject(o: KubeObject, old?: KubeObject): void {
  validate(o);
  const hasSpec =
    o.spec !== undefined || ['GatewayClass', 'Gateway', 'HTTPRoute', 'Ingress', 'IngressClass'].includes(o.kind);
  if (!hasSpec) return;
  o.spec ??= {};
  if (!old) {
    // The status subresource: a create's status is dropped, the CRD's default put in its place.
    o.metadata.generation = 1;
    if (o.kind === 'GatewayClass') o.status = pending(['Accepted']);
    else if (o.kind === 'Gateway') o.status = pending(['Accepted', 'Programmed']);
    else if (o.kind === 'Ingress') o.status = { loadBalancer: {} };
    else delete o.status;
    return;
  }
  o.status = old.status;
  o.metadata.generation =
    canonicalJson(o.spec) === canonicalJson(old.spec)
      ? old.metadata.generation
      : Number(old.metadata.generation ?? 1) + 1;
}
