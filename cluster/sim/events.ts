// Events, as client-go's event recorder writes them (core/v1 Event): the one recorder for the
// controllers, the scheduler and the kubelet (which also names its node and the container's field).
import { randomBytes } from 'node:crypto';
import { NODE_NAME } from './ports.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime } from './time.ts';

let counter = 0;

export interface EventOptions {
  /** The node of a node-level component (the kubelet): source.host and reportingInstance. */
  host?: string;
  /** The part of the object the event is about: `spec.containers{name}`. */
  fieldPath?: string;
}

export function recordEvent(
  store: Store,
  involved: KubeObject,
  component: string,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  options: EventOptions = {},
): void {
  const now = apiTime();
  const { host, fieldPath } = options;
  store.create('events', {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${involved.metadata.name}.${(++counter).toString(16).padStart(8, '0')}${randomBytes(2).toString('hex')}`,
      namespace: involved.metadata.namespace,
      uid: crypto.randomUUID(),
      resourceVersion: '',
      creationTimestamp: now,
    },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      name: involved.metadata.name,
      namespace: involved.metadata.namespace,
      uid: involved.metadata.uid,
      resourceVersion: involved.metadata.resourceVersion,
      ...(fieldPath ? { fieldPath } : {}),
    },
    reason,
    message,
    type,
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: host ? { component, host } : { component },
    reportingComponent: component,
    reportingInstance: host ?? '',
  });
}

/** The kubelet's events: its node as the source, about the pod or one of its containers. */
export function kubeletEvent(
  store: Store,
  pod: KubeObject,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  container?: string,
): void {
  recordEvent(store, pod, 'kubelet', type, reason, message, {
    host: NODE_NAME,
    ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
  });
}
