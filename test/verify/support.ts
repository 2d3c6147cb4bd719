// The team's own app for `termlab verify` tests: a Deployment of the lab image behind a Service,
// made through the API on the simulated cluster (the image's modes stand for "your app").
import * as k8s from '@kubernetes/client-node';

export interface AppOptions {
  name: string;
  mode?: 'graceful' | 'immediate';
  preStopSleep?: number;
  serviceType?: 'ClusterIP' | 'NodePort';
  replicas?: number;
  grace?: number;
  image?: string;
  progressDeadlineSeconds?: number;
}

export function appDeployment(o: AppOptions): k8s.V1Deployment {
  const labels = { app: o.name };
  return {
    metadata: { name: o.name, labels },
    spec: {
      replicas: o.replicas ?? 3,
      ...(o.progressDeadlineSeconds ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {}),
      selector: { matchLabels: labels },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 as never, maxUnavailable: 0 as never } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: o.grace ?? 30,
          containers: [
            {
              name: 'web',
              image: o.image ?? 'termlab/lab-server:0.1.0',
              env: [
                { name: 'LAB_MODE', value: o.mode ?? 'graceful' },
                { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
              ],
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' as never },
                periodSeconds: 1,
                failureThreshold: 1,
              },
              ...(o.preStopSleep ? { lifecycle: { preStop: { sleep: { seconds: o.preStopSleep } } } } : {}),
            },
          ],
        },
      },
    },
  };
}

export function appService(o: AppOptions): k8s.V1Service {
  return {
    metadata: { name: o.name },
    spec: {
      type: o.serviceType ?? 'NodePort',
      selector: { app: o.name },
      ports: [{ name: 'http', port: 80, targetPort: 'http' as never }],
    },
  };
}

/** Creates both and waits (on a watch) until the Deployment is available. */
export async function createApp(kc: k8s.KubeConfig, namespace: string, o: AppOptions): Promise<void> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedService({ namespace, body: appService(o) });
  const made = await apps.createNamespacedDeployment({ namespace, body: appDeployment(o) });
  const replicas = o.replicas ?? 3;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void req.then((r) => r.abort());
      reject(new Error(`deployment ${o.name} not available in 60s`));
    }, 60_000);
    const req = new k8s.Watch(kc).watch(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      { fieldSelector: `metadata.name=${o.name}`, resourceVersion: made.metadata!.resourceVersion! },
      (_type, d: k8s.V1Deployment) => {
        if (
          d.status?.availableReplicas === replicas &&
          d.status?.updatedReplicas === replicas &&
          d.status?.replicas === replicas
        ) {
          clearTimeout(timer);
          void req.then((r) => r.abort());
          resolve();
        }
      },
      () => {},
    );
  });
}

/** `termlab verify deployment/NAME` as a real process against a kubeconfig, its `-o json` summary parsed. */
export async function runVerify<S>(
  kubeconfig: string,
  outputDir: string,
  name: string,
  args: string[],
): Promise<{ code: number | null; summary: S; stderr: string }> {
  const { runCli } = await import('../support/cli.ts');
  const r = await runCli([
    'verify',
    `deployment/${name}`,
    '--kubeconfig',
    kubeconfig,
    '--output-dir',
    outputDir,
    '-o',
    'json',
    ...args,
  ]);
  try {
    return { code: r.code, summary: JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1)) as S, stderr: r.stderr };
  } catch {
    throw new Error(`no JSON summary (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}
