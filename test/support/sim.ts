// Helpers for tests that drive the simulated cluster with @kubernetes/client-node only.
import * as k8s from '@kubernetes/client-node';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { ApiHealth, openPortForward, type PortForwardHandle } from '../../harness/kube/index.ts';

export interface SimClient {
  sim: SimCluster;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
}

export async function startSimClient(): Promise<SimClient> {
  const sim = await startSimCluster();
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  return { sim, kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}

/** A port-forward to a pod through the harness's one door to a cluster (harness/kube), from a bare KubeConfig. */
export function forwardTo(
  kc: k8s.KubeConfig,
  namespace: string,
  pod: string,
  port: number,
): Promise<PortForwardHandle> {
  return openPortForward(
    { kc, health: new ApiHealth(), context: kc.getCurrentContext(), server: kc.getCurrentCluster()?.server ?? '' },
    namespace,
    pod,
    port,
  );
}

export function labPod(
  name: string,
  spec: Partial<k8s.V1Container> & { grace?: number; finalizers?: string[]; deadline?: number; mode?: string } = {},
): k8s.V1Pod {
  const { grace, finalizers, deadline, mode, ...container } = spec;
  return {
    metadata: { name, labels: { app: 'lab' }, finalizers },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: grace ?? 30,
      activeDeadlineSeconds: deadline,
      containers: [
        {
          name: 'lab',
          image: 'termlab/lab-server:0.1.0',
          env: [
            { name: 'LAB_MODE', value: mode ?? 'graceful' },
            { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          ],
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 1 },
          ...container,
        },
      ],
    },
  };
}

export type WatchedPod = { type: string; pod: k8s.V1Pod; at: number };

/** A pod watch that keeps every event and lets a test wait for one. */
export async function watchPod(kc: k8s.KubeConfig, namespace: string, name: string, resourceVersion?: string) {
  const events: WatchedPod[] = [];
  const waiters = new Set<() => void>();
  let ended: unknown = null;
  const request = await new k8s.Watch(kc).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { fieldSelector: `metadata.name=${name}`, ...(resourceVersion ? { resourceVersion } : {}) },
    (type, pod: k8s.V1Pod) => {
      events.push({ type, pod, at: performance.now() });
      for (const w of waiters) w();
    },
    (error) => {
      ended = error ?? 'closed';
      for (const w of waiters) w();
    },
  );
  function waitFor(match: (e: WatchedPod) => boolean, what: string, timeoutMs = 20_000): Promise<WatchedPod> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = events.find(match);
        if (found) {
          done();
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `timed out waiting for ${what}; saw ${events.map((e) => e.type).join(',')}${ended ? `; watch ended: ${String(ended)}` : ''}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }
  return {
    events,
    waitFor,
    stop: () => request.abort(),
    get ended() {
      return ended;
    },
  };
}

export const isReady = (e: WatchedPod) =>
  e.pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
export const terminatedState = (e: WatchedPod) => e.pod.status?.containerStatuses?.[0]?.state?.terminated;

/** The bearer token a sim's kubeconfig carries: the only way an in-process caller gets it. */
export function simToken(sim: SimCluster): string {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  const token = kc.getCurrentUser()?.token;
  if (!token) throw new Error('the sim kubeconfig has no token');
  return token;
}

/** The sim's own certificate, which its kubeconfig tells clients to trust. */
export function simCA(sim: SimCluster): string {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  const data = kc.getCurrentCluster()?.caData;
  if (!data) throw new Error('the sim kubeconfig has no certificate-authority-data');
  return Buffer.from(data, 'base64').toString('utf8');
}
