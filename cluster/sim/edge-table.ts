// kubectl's columns for the edge's kinds: the Gateway API CRDs' additionalPrinterColumns (config/crd/standard)
// and the API server's printers for Ingress, IngressClass, ServiceAccount and RBAC (printers.go).
import type { KubeObject } from './store.ts';

type Cell = string | number;
interface EdgeTable {
  columns: string[];
  cells(o: KubeObject): Cell[];
}

const condition = (o: KubeObject, type: string): string =>
  ((o.status?.conditions ?? []) as any[]).find((c) => c.type === type)?.status ?? 'Unknown';

export const EDGE_TABLES: Record<string, EdgeTable> = {
  gatewayclasses: {
    columns: ['Name', 'Controller', 'Accepted'],
    cells: (o) => [o.metadata.name, o.spec?.controllerName ?? '', condition(o, 'Accepted')],
  },
  gateways: {
    columns: ['Name', 'Class', 'Address', 'Programmed'],
    cells: (o) => [
      o.metadata.name,
      o.spec?.gatewayClassName ?? '',
      o.status?.addresses?.[0]?.value ?? '',
      condition(o, 'Programmed'),
    ],
  },
  httproutes: {
    columns: ['Name', 'Hostnames'],
    cells: (o) => [o.metadata.name, JSON.stringify(o.spec?.hostnames ?? [])],
  },
  ingresses: {
    columns: ['Name', 'Class', 'Hosts', 'Address', 'Ports'],
    cells: (o) => [
      o.metadata.name,
      o.spec?.ingressClassName ?? '<none>',
      ((o.spec?.rules ?? []) as any[]).map((r) => r.host ?? '*').join(',') || '*',
      ((o.status?.loadBalancer?.ingress ?? []) as any[]).map((i) => i.ip ?? i.hostname).join(','),
      o.spec?.tls?.length ? '80, 443' : '80',
    ],
  },
  ingressclasses: {
    columns: ['Name', 'Controller', 'Parameters'],
    cells: (o) => [o.metadata.name, o.spec?.controller ?? '', '<none>'],
  },
  serviceaccounts: { columns: ['Name', 'Secrets'], cells: (o) => [o.metadata.name, (o.secrets ?? []).length] },
  clusterroles: { columns: ['Name'], cells: (o) => [o.metadata.name] },
  clusterrolebindings: {
    columns: ['Name', 'Role'],
    cells: (o) => [o.metadata.name, `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`],
  },
};
