// Helpers for tests of the simulated cluster's Deployments, Services and EndpointSlices (client-node only).
import * as k8s from '@kubernetes/client-node';

/** A Deployment of the lab server shaped as manifests/lab-pod.yaml (restartPolicy Always, as a Deployment needs). */
export function labDeployment(
  name: string,
  options: {
    replicas?: number;
    maxSurge?: number | string;
    maxUnavailable?: number | string;
    grace?: number;
    mode?: string;
    lifecycle?: k8s.V1Lifecycle;
  } = {},
): k8s.V1Deployment {
  const labels = { 'app.kubernetes.io/name': name };
  return {
    metadata: { name, labels },
    spec: {
      replicas: options.replicas ?? 2,
      selector: { matchLabels: labels },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: options.maxSurge ?? 1, maxUnavailable: options.maxUnavailable ?? 0 } as any,
      },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: options.grace ?? 10,
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'lab',
              image: 'termlab/lab-server:0.1.0',
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: 'http', containerPort: 8080 }],
              env: [
                { name: 'LAB_MODE', value: options.mode ?? 'graceful' },
                { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' as any },
                periodSeconds: 1,
                failureThreshold: 1,
              },
              ...(options.lifecycle ? { lifecycle: options.lifecycle } : {}),
            },
          ],
        },
      },
    },
  };
}

export function nodePortService(name: string, nodePort?: number): k8s.V1Service {
  return {
    metadata: { name },
    spec: {
      type: 'NodePort',
      selector: { 'app.kubernetes.io/name': name },
      ports: [{ name: 'http', port: 80, targetPort: 'http' as any, ...(nodePort ? { nodePort } : {}) }],
    },
  };
}

export type Seen<T> = { type: string; object: T; at: number };

/** A watch on any collection path that keeps every event and lets a test wait for one. */
export async function watchAll<T = any>(kc: k8s.KubeConfig, path: string, query: Record<string, string> = {}) {
  const events: Seen<T>[] = [];
  const waiters = new Set<() => void>();
  let ended: unknown = null;
  const request = await new k8s.Watch(kc).watch(
    path,
    query,
    (type, object: T) => {
      events.push({ type, object, at: performance.timeOrigin + performance.now() });
      for (const w of waiters) w();
    },
    (error) => {
      ended = error ?? 'closed';
      for (const w of waiters) w();
    },
  );
  function waitFor(match: (e: Seen<T>, all: Seen<T>[]) => boolean, what: string, timeoutMs = 30_000): Promise<Seen<T>> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = events.find((e) => match(e, events));
        if (found) {
          done();
          resolve(found);
        } else if (ended) {
          done();
          reject(new Error(`watch ${path} ended (${String(ended)}) before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what}; saw ${events.length} events`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }
  return { events, waitFor, stop: () => request.abort() };
}

export const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

/** A Deployment's Service (port 80 to its `http` port) and an HTTPRoute for it on the edge's Gateway, host NAME.example. */
export function publishedAtEdge(name: string, labels: Record<string, string>): Record<string, any>[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace: 'default' },
      spec: {
        parentRefs: [{ name: 'edge', namespace: 'termlab-edge' }],
        hostnames: [`${name}.example`],
        rules: [{ backendRefs: [{ name, port: 80 }] }],
      },
    },
  ];
}
