// kubectl asks for `as=Table`; these are the columns a real API server gives (pkg/printers/internalversion/printers.go).
import { EDGE_TABLES } from './edge-table.ts';
import type { KubeObject } from './store.ts';

function age(timestamp: string | undefined): string {
  if (!timestamp) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

function podStatus(pod: KubeObject): string {
  if (pod.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(pod.status?.phase)) return 'Terminating';
  const statuses: any[] = pod.status?.containerStatuses ?? [];
  const waiting = statuses.find((c) => c.state?.waiting)?.state.waiting.reason;
  const terminated = statuses.find((c) => c.state?.terminated)?.state.terminated.reason;
  return pod.status?.reason ?? waiting ?? terminated ?? pod.status?.phase ?? 'Unknown';
}

function selectorText(selector: any): string {
  const labels = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const expressions = ((selector?.matchExpressions ?? []) as any[]).map(
    (e) => `${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`,
  );
  return [...labels, ...expressions].join(',') || '<none>';
}

const column = (name: string, type = 'string', priority = 0) => ({
  name,
  type,
  format: name === 'Name' ? 'name' : '',
  description: name,
  priority,
});

export function toTable(resource: string, items: KubeObject[], resourceVersion: string) {
  const edge = EDGE_TABLES[resource];
  if (edge)
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion },
      columnDefinitions: [...edge.columns.map((name) => column(name)), column('Age')],
      rows: items.map((o) => ({
        cells: [...edge.cells(o), age(o.metadata.creationTimestamp)],
        object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
      })),
    };
  const rows = items.map((o) => {
    let cells: unknown[];
    if (resource === 'pods') {
      const statuses: any[] = o.status?.containerStatuses ?? [];
      cells = [
        o.metadata.name,
        `${statuses.filter((c) => c.ready).length}/${o.spec.containers.length}`,
        podStatus(o),
        0,
        age(o.metadata.creationTimestamp),
        o.status?.podIP ?? '<none>',
        o.spec.nodeName ?? '<none>',
      ];
    } else if (resource === 'events') {
      cells = [
        age(o.lastTimestamp),
        o.type,
        o.reason,
        `${o.involvedObject?.kind?.toLowerCase()}/${o.involvedObject?.name}`,
        o.message,
      ];
    } else if (resource === 'deployments') {
      const st = o.status ?? {};
      const containers: any[] = o.spec.template?.spec?.containers ?? [];
      cells = [
        o.metadata.name,
        `${st.readyReplicas ?? 0}/${o.spec.replicas}`,
        st.updatedReplicas ?? 0,
        st.availableReplicas ?? 0,
        age(o.metadata.creationTimestamp),
        containers.map((c) => c.name).join(','),
        containers.map((c) => c.image).join(','),
        selectorText(o.spec.selector),
      ];
    } else if (resource === 'replicasets') {
      const containers: any[] = o.spec.template?.spec?.containers ?? [];
      cells = [
        o.metadata.name,
        o.spec.replicas,
        o.status?.replicas ?? 0,
        o.status?.readyReplicas ?? 0,
        age(o.metadata.creationTimestamp),
        containers.map((c) => c.name).join(','),
        containers.map((c) => c.image).join(','),
        selectorText(o.spec.selector),
      ];
    } else if (resource === 'services') {
      const ports = ((o.spec.ports ?? []) as any[])
        .map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}`)
        .join(',');
      cells = [
        o.metadata.name,
        o.spec.type,
        o.spec.clusterIP ?? '<none>',
        o.spec.type === 'LoadBalancer' ? '<pending>' : '<none>',
        ports || '<none>',
        age(o.metadata.creationTimestamp),
        Object.entries(o.spec.selector ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',') || '<none>',
      ];
    } else if (resource === 'endpointslices') {
      const ports = ((o.ports ?? []) as any[]).map((p) => p.port).join(',');
      const addresses = ((o.endpoints ?? []) as any[]).flatMap((e) => e.addresses ?? []);
      cells = [
        o.metadata.name,
        o.addressType,
        ports || '<unset>',
        addresses.length
          ? addresses.slice(0, 3).join(',') + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : '')
          : '<unset>',
        age(o.metadata.creationTimestamp),
      ];
    } else if (resource === 'configmaps') {
      cells = [
        o.metadata.name,
        Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length,
        age(o.metadata.creationTimestamp),
      ];
    } else if (resource === 'nodes') {
      cells = [
        o.metadata.name,
        'Ready',
        '<none>',
        age(o.metadata.creationTimestamp),
        o.status?.nodeInfo?.kubeletVersion,
      ];
    } else {
      cells = [o.metadata.name, o.status?.phase ?? 'Active', age(o.metadata.creationTimestamp)];
    }
    return { cells, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata } };
  });
  const columns =
    resource === 'pods'
      ? [
          column('Name'),
          column('Ready'),
          column('Status'),
          column('Restarts', 'integer'),
          column('Age'),
          column('IP', 'string', 1),
          column('Node', 'string', 1),
        ]
      : resource === 'events'
        ? [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Message')]
        : resource === 'deployments'
          ? [
              column('Name'),
              column('Ready'),
              column('Up-to-date', 'integer'),
              column('Available', 'integer'),
              column('Age'),
              column('Containers', 'string', 1),
              column('Images', 'string', 1),
              column('Selector', 'string', 1),
            ]
          : resource === 'replicasets'
            ? [
                column('Name'),
                column('Desired', 'integer'),
                column('Current', 'integer'),
                column('Ready', 'integer'),
                column('Age'),
                column('Containers', 'string', 1),
                column('Images', 'string', 1),
                column('Selector', 'string', 1),
              ]
            : resource === 'services'
              ? [
                  column('Name'),
                  column('Type'),
                  column('Cluster-IP'),
                  column('External-IP'),
                  column('Port(s)'),
                  column('Age'),
                  column('Selector', 'string', 1),
                ]
              : resource === 'endpointslices'
                ? [column('Name'), column('AddressType'), column('Ports'), column('Endpoints'), column('Age')]
                : resource === 'nodes'
                  ? [column('Name'), column('Status'), column('Roles'), column('Age'), column('Version')]
                  : resource === 'configmaps'
                    ? [column('Name'), column('Data', 'integer'), column('Age')]
                    : [column('Name'), column('Status'), column('Age')];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: columns,
    rows,
  };
}
