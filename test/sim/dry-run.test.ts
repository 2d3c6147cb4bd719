// dryRun=All on the simulated API server, as a real one does it: the request is validated, defaulted
// and checked (names, preconditions, conflicts, a JSON patch's test) and answered as if done, but
// nothing is stored and no watch hears of it. `termlab verify` checks its writes this way before it
// makes any. Through @kubernetes/client-node (and kubectl's --dry-run=server, when kubectl is here).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { hasKubectl, runKubectl } from '../support/kubectl.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
const ns = 'default';

const labPod = (name: string): k8s.V1Pod => ({
  metadata: { name, labels: { app: name } },
  spec: {
    terminationGracePeriodSeconds: 5,
    containers: [
      {
        name: 'lab',
        image: 'termlab/lab-server:0.1.0',
        ports: [{ containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/readyz', port: 8080 as never }, periodSeconds: 1 },
      },
    ],
  },
});

/** The first event a watch from `resourceVersion` sees for this collection, and its object. */
function firstEvent(
  path: string,
  resourceVersion: string,
  query: Record<string, string> = {},
): Promise<{ type: string; object: any }> {
  return new Promise((resolve, reject) => {
    let request: Promise<{ abort(): void }> | null = null;
    const timer = setTimeout(() => reject(new Error(`no event on ${path} in 30s`)), 30_000);
    request = new k8s.Watch(kc).watch(
      path,
      { ...query, resourceVersion },
      (type, object) => {
        clearTimeout(timer);
        void request?.then((r) => r.abort());
        resolve({ type, object });
      },
      () => {},
    );
  });
}

/** Until the pod is Ready, on a watch. */
function ready(name: string, resourceVersion: string): Promise<k8s.V1Pod> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pod ${name} not Ready in 60s`)), 60_000);
    const request = new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { fieldSelector: `metadata.name=${name}`, resourceVersion },
      (_type, pod: k8s.V1Pod) => {
        if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
          clearTimeout(timer);
          void request.then((r) => r.abort());
          resolve(pod);
        }
      },
      () => {},
    );
  });
}

const statusOf = async (call: Promise<unknown>) =>
  call.then(
    () => 200,
    (error: unknown) => (error instanceof k8s.ApiException ? error.code : -1),
  );

beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
});

describe('dryRun=All on the simulated cluster', () => {
  it('create pod: answered with the defaulted pod; nothing stored, no watch event, nothing started', async () => {
    const before = (await core.listNamespacedPod({ namespace: ns })).metadata!.resourceVersion!;
    const answer = await core.createNamespacedPod({ namespace: ns, body: labPod('dry'), dryRun: 'All' });
    expect(answer.metadata).toMatchObject({ name: 'dry', namespace: ns, resourceVersion: '' });
    expect(answer.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.spec?.restartPolicy).toBe('Always');
    expect(answer.status?.phase).toBe('Pending');
    expect(await statusOf(core.readNamespacedPod({ name: 'dry', namespace: ns }))).toBe(404);
    // The first event after the dry run is a real create's: the dry run made none.
    const next = firstEvent(`/api/v1/namespaces/${ns}/pods`, before);
    await core.createNamespacedPod({ namespace: ns, body: labPod('real') });
    expect((await next).object.metadata.name).toBe('real');
  });

  it('create: a name that exists is still AlreadyExists, and only All is a dryRun value', async () => {
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'taken' }, spec: { ports: [{ port: 80 }] } },
    });
    expect(
      await statusOf(
        core.createNamespacedService({
          namespace: ns,
          body: { metadata: { name: 'taken' }, spec: { ports: [{ port: 80 }] } },
          dryRun: 'All',
        }),
      ),
    ).toBe(409);
    const refused = await core
      .createNamespacedService({
        namespace: ns,
        body: { metadata: { name: 'other' }, spec: { ports: [{ port: 80 }] } },
        dryRun: 'Some',
      })
      .catch((e: unknown) => e as k8s.ApiException<string>);
    expect((refused as k8s.ApiException<string>).code).toBe(422);
    expect(String((refused as k8s.ApiException<string>).body)).toContain(
      'CreateOptions.meta.k8s.io \\"\\" is invalid: dryRun: Unsupported value: []string{\\"Some\\"}: supported values: \\"All\\"',
    );
    expect(await statusOf(core.readNamespacedService({ name: 'other', namespace: ns }))).toBe(404);
  });

  it('create NodePort service: a clusterIP and nodePort are picked but not taken (a real create may have that very port)', async () => {
    const answer = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'np' }, spec: { type: 'NodePort', selector: { app: 'x' }, ports: [{ port: 80 }] } },
      dryRun: 'All',
    });
    const nodePort = answer.spec!.ports![0]!.nodePort!;
    expect(answer.spec?.clusterIP).toMatch(/^10\.96\./);
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    expect(await statusOf(core.readNamespacedService({ name: 'np', namespace: ns }))).toBe(404);
    const made = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'np' },
        spec: { type: 'NodePort', selector: { app: 'x' }, ports: [{ port: 80, nodePort }] },
      },
    });
    expect(made.spec?.ports?.[0]?.nodePort).toBe(nodePort);
  });

  it('patch deployment: the restartedAt JSON patch is answered applied (and its test op checked); the stored Deployment and its rollout are untouched', async () => {
    const body: k8s.V1Deployment = {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: labPod('web').spec! },
      },
    };
    const made = await apps.createNamespacedDeployment({ namespace: ns, body });
    const patch = (rv: string) => [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      {
        op: 'add',
        path: '/spec/template/metadata/annotations',
        value: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
      },
    ];
    const current = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
    const answer = await apps.patchNamespacedDeployment({
      name: 'web',
      namespace: ns,
      body: patch(current.metadata!.resourceVersion!),
      dryRun: 'All',
    });
    expect(answer.spec?.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toBe(
      '2026-01-01T00:00:00Z',
    );
    expect(answer.metadata?.generation).toBe(2);
    expect(answer.metadata?.resourceVersion).toBe(current.metadata?.resourceVersion);
    expect(
      await statusOf(apps.patchNamespacedDeployment({ name: 'web', namespace: ns, body: patch('1'), dryRun: 'All' })),
    ).toBe(422);
    const stored = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
    expect(stored.metadata?.generation).toBe(1);
    expect(stored.spec?.template.metadata?.annotations).toBeUndefined();
    // Only one ReplicaSet ever: the first event on ReplicaSets after the create is its own.
    const rs = await firstEvent(`/apis/apps/v1/namespaces/${ns}/replicasets`, made.metadata!.resourceVersion!);
    expect(
      (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app=web' })).items.map(
        (r) => r.metadata?.uid,
      ),
    ).toEqual([rs.object.metadata.uid]);
  });

  it('delete pod: answered with its deletionTimestamp, the UID precondition checked; the pod is not terminating and keeps serving', async () => {
    const made = await core.createNamespacedPod({ namespace: ns, body: labPod('kept') });
    const pod = await ready('kept', made.metadata!.resourceVersion!);
    expect(
      await statusOf(
        core.deleteNamespacedPod({
          name: 'kept',
          namespace: ns,
          body: { preconditions: { uid: 'not-its-uid' } },
          dryRun: 'All',
        }),
      ),
    ).toBe(409);
    const answer = await core.deleteNamespacedPod({
      name: 'kept',
      namespace: ns,
      body: { preconditions: { uid: pod.metadata!.uid! } },
      dryRun: 'All',
    });
    expect(answer.metadata?.deletionTimestamp).toBeTruthy();
    // The next change the pod's watch sees is a real label patch, not a deletion.
    const next = firstEvent(`/api/v1/namespaces/${ns}/pods`, pod.metadata!.resourceVersion!, {
      fieldSelector: 'metadata.name=kept',
    });
    await core.patchNamespacedPod({
      name: 'kept',
      namespace: ns,
      body: [{ op: 'add', path: '/metadata/labels/seen', value: 'yes' }],
    });
    const event = await next;
    expect(event.object.metadata.labels.seen).toBe('yes');
    expect(event.object.metadata.deletionTimestamp).toBeUndefined();
    expect(event.object.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('True');
    expect(sim.truth(pod.metadata!.uid!)).not.toHaveProperty('deleteReceivedAt');
    expect(sim.truth(pod.metadata!.uid!)).not.toHaveProperty('termSentAt');
  });

  it('delete service: checked and answered; the Service stays', async () => {
    const svc = await core.readNamespacedService({ name: 'taken', namespace: ns });
    await core.deleteNamespacedService({
      name: 'taken',
      namespace: ns,
      body: { preconditions: { uid: svc.metadata!.uid! } },
      dryRun: 'All',
    });
    expect((await core.readNamespacedService({ name: 'taken', namespace: ns })).metadata?.uid).toBe(svc.metadata?.uid);
  });

  it.skipIf(!hasKubectl)(
    "kubectl's --dry-run=server: create (protobuf, dryRun in the query) and delete (dryRun in DeleteOptions) change nothing",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'termlab-dry-run-'));
      writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
      const env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
      const created = await runKubectl(
        env,
        ['create', 'deployment', 'dry-web', '--image=termlab/lab-server:0.1.0', '--dry-run=server', '-o', 'name'],
        20_000,
      );
      expect(created, created.err).toMatchObject({ code: 0, out: 'deployment.apps/dry-web\n' });
      expect(await statusOf(apps.readNamespacedDeployment({ name: 'dry-web', namespace: ns }))).toBe(404);
      const deleted = await runKubectl(env, ['delete', 'service', 'taken', '--dry-run=server'], 20_000);
      expect(deleted, deleted.err).toMatchObject({
        code: 0,
        out: expect.stringMatching(/^service "taken" deleted.* \(server dry run\)\n$/),
      });
      expect((await core.readNamespacedService({ name: 'taken', namespace: ns })).metadata?.name).toBe('taken');
    },
  );
});
