// kubectl asks for `as=Table`; these are the columns a real API server gives for pods and events.
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

const column = (name: string, type = 'string', priority = 0) => ({ name, type, format: name === 'Name' ? 'name' : '', description: name, priority });

export function toTable(resource: string, items: KubeObject[], resourceVersion: string) {
  const rows = items.map((o) => {
    let cells: unknown[];
    if (resource === 'pods') {
      const statuses: any[] = o.status?.containerStatuses ?? [];
      cells = [o.metadata.name, `${statuses.filter((c) => c.ready).length}/${o.spec.containers.length}`, podStatus(o), 0, age(o.metadata.creationTimestamp), o.status?.podIP ?? '<none>', o.spec.nodeName ?? '<none>'];
    } else if (resource === 'events') {
      cells = [age(o.lastTimestamp), o.type, o.reason, `${o.involvedObject?.kind?.toLowerCase()}/${o.involvedObject?.name}`, o.message];
    } else if (resource === 'nodes') {
      cells = [o.metadata.name, 'Ready', '<none>', age(o.metadata.creationTimestamp), o.status?.nodeInfo?.kubeletVersion];
    } else {
      cells = [o.metadata.name, o.status?.phase ?? 'Active', age(o.metadata.creationTimestamp)];
    }
    return { cells, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata } };
  });
  const columns = resource === 'pods'
    ? [column('Name'), column('Ready'), column('Status'), column('Restarts', 'integer'), column('Age'), column('IP', 'string', 1), column('Node', 'string', 1)]
    : resource === 'events' ? [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Message')]
    : resource === 'nodes' ? [column('Name'), column('Status'), column('Roles'), column('Age'), column('Version')]
    : [column('Name'), column('Status'), column('Age')];
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion }, columnDefinitions: columns, rows };
}
