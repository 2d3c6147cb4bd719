// Events from the controllers, as client-go's event recorder writes them (core/v1 Event).
import { randomBytes } from 'node:crypto';
import type { KubeObject, Store } from './store.ts';
import { apiTime } from './time.ts';

let counter = 0;

export function recordEvent(store: Store, involved: KubeObject, component: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
  const now = apiTime();
  store.create('events', {
    apiVersion: 'v1', kind: 'Event',
    metadata: { name: `${involved.metadata.name}.${(++counter).toString(16).padStart(8, '0')}${randomBytes(2).toString('hex')}`, namespace: involved.metadata.namespace, uid: crypto.randomUUID(), resourceVersion: '', creationTimestamp: now },
    involvedObject: { apiVersion: involved.apiVersion, kind: involved.kind, name: involved.metadata.name, namespace: involved.metadata.namespace, uid: involved.metadata.uid, resourceVersion: involved.metadata.resourceVersion },
    reason, message, type, count: 1, firstTimestamp: now, lastTimestamp: now,
    source: { component }, reportingComponent: component, reportingInstance: '',
  });
}
