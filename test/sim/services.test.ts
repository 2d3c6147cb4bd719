// Services, EndpointSlices and the service proxy on the simulated cluster: real pods, real sockets.
import { request as httpRequest } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { labDeployment, nodePortService, watchAll } from '../support/sim-apps.ts';

const SYNC_DELAY_MS = 1000;
let sim: SimCluster;
let kc: k8s.KubeConfig;
let apps: k8s.AppsV1Api;
let core: k8s.CoreV1Api;
const ns = 'default';

beforeAll(async () => {
  sim = await startSimCluster({ proxy: { syncDelayMs: SYNC_DELAY_MS } });
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  core = kc.makeApiClient(k8s.CoreV1Api);
});
afterAll(async () => {
  await sim?.stop();
});

/** One GET on a fresh connection: status, the pod's UID header, and the body once it ends (or the socket error). */
function get(
  port: number,
  path: string,
  onHeaders?: (podUid: string) => void,
): Promise<{ status?: number; podUid?: string; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const podUid = String(res.headers['x-pod-uid'] ?? '');
      onHeaders?.(podUid);
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, podUid, body }));
      res.on('error', (e: NodeJS.ErrnoException) =>
        resolve({ status: res.statusCode, podUid, error: e.code ?? e.message }),
      );
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

const readyUids = async (name: string) =>
  (await core.listNamespacedPod({ namespace: ns, labelSelector: `app.kubernetes.io/name=${name}` })).items
    .filter(
      (p) =>
        !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    )
    .map((p) => p.metadata!.uid!);

async function availableDeployment(name: string, options: Parameters<typeof labDeployment>[1]) {
  const watch = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
    fieldSelector: `metadata.name=${name}`,
  });
  await apps.createNamespacedDeployment({ namespace: ns, body: labDeployment(name, options) });
  await watch.waitFor((e) => e.object.status?.availableReplicas === options?.replicas, 'available');
  watch.stop();
}

describe('Services on the simulated cluster', () => {
  it('allocates a ClusterIP and a nodePort, and the proxy sends requests on 127.0.0.1:<nodePort> to ready pods only', async () => {
    const svc = await core.createNamespacedService({ namespace: ns, body: nodePortService('web') });
    expect(svc.spec?.clusterIP).toMatch(/^10\.96\.\d+\.\d+$/);
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    expect(nodePort).toBeLessThanOrEqual(32767);
    // No endpoint yet: refused at once.
    expect((await get(nodePort, '/work?ms=1')).error).toMatch(/ECONNRESET|ECONNREFUSED/);
    expect((await sim.proxyTruth(ns, 'web'))?.connections.at(-1)).toMatchObject({
      podUid: null,
      result: 'refused',
      nodePort,
    });

    const slices = await watchAll<k8s.V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=web' },
    );
    await availableDeployment('web', { replicas: 2 });
    const ready = await slices.waitFor(
      (e) => (e.object.endpoints ?? []).filter((ep) => ep.conditions?.ready).length === 2,
      'two ready endpoints',
    );
    slices.stop();
    const slice = ready.object;
    expect(slice.addressType).toBe('IPv4');
    expect(slice.metadata?.labels).toMatchObject({
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(slice.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Service', name: 'web', uid: svc.metadata!.uid, controller: true }),
    ]);
    expect(slice.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const uids = await readyUids('web');
    for (const ep of slice.endpoints!) {
      expect(ep.addresses).toEqual(['127.0.0.1']);
      expect(ep.nodeName).toBe('termlab-sim-node');
      expect(ep.targetRef).toMatchObject({ kind: 'Pod', namespace: ns });
      expect(uids).toContain(ep.targetRef!.uid);
    }
    // The proxy acts on the slice once its view has caught up; then every request reaches a ready pod.
    await expect
      .poll(async () => (await sim.proxyTruth(ns, 'web'))?.changes.at(-1)?.readyPodUids.length, { timeout: 10_000 })
      .toBe(2);
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const answer = await get(nodePort, `/work?ms=1&id=r${i}`);
      expect(answer.status).toBe(200);
      expect(uids).toContain(answer.podUid);
      seen.add(answer.podUid!);
    }
    // Random choice among two endpoints: 20 draws all alike would be a 1 in 500,000 chance.
    expect(seen.size).toBe(2);
    const routed = (await sim.proxyTruth(ns, 'web'))!.connections.filter((c) => c.result === 'routed');
    expect(routed.length).toBeGreaterThanOrEqual(20);
  });

  it('keeps sending new connections to a deleted pod until its view syncs, and keeps an established one on it to the end', async () => {
    const svc = await core.createNamespacedService({ namespace: ns, body: nodePortService('drain') });
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    await availableDeployment('drain', { replicas: 2, lifecycle: { preStop: { sleep: { seconds: 3 } } } });
    await expect
      .poll(async () => (await sim.proxyTruth(ns, 'drain'))?.changes.at(-1)?.readyPodUids.length, { timeout: 10_000 })
      .toBe(2);
    // A long request pins its connection: its header names the pod it reached; that pod is deleted.
    let pinned: (uid: string) => void = () => {};
    const headers = new Promise<string>((resolve) => {
      pinned = resolve;
    });
    const long = get(nodePort, '/work?ms=6000&id=long', (uid) => pinned(uid));
    const victim = await Promise.race([
      headers,
      long.then((a) => {
        throw new Error(`the long request ended early: ${JSON.stringify(a)}`);
      }),
    ]);
    expect(victim).not.toBe('');
    const victimName = (
      await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/name=drain' })
    ).items.find((p) => p.metadata!.uid === victim)!.metadata!.name!;
    const slices = await watchAll<k8s.V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=drain' },
    );
    await core.deleteNamespacedPod({ name: victimName, namespace: ns });
    const terminating = await slices.waitFor(
      (e) => (e.object.endpoints ?? []).some((ep) => ep.targetRef?.uid === victim && ep.conditions?.terminating),
      'the victim terminating in the slice',
    );
    const ep = terminating.object.endpoints!.find((x) => x.targetRef?.uid === victim)!;
    // Terminating: never ready; serving while its readiness holds (the hook runs, the server still serves).
    expect(ep.conditions).toEqual({ ready: false, serving: true, terminating: true });
    // New connections until the proxy's view drops the victim: some still reach it.
    const answers: { podUid?: string; status?: number; error?: string }[] = [];
    const viewDropsVictim = async () => {
      const changes = (await sim.proxyTruth(ns, 'drain'))!.changes;
      const withVictim = changes.map((c, i) => (c.readyPodUids.includes(victim) ? i : -1)).filter((i) => i >= 0);
      return changes[(withVictim.at(-1) ?? -1) + 1];
    };
    while (!(await viewDropsVictim())) answers.push(await get(nodePort, '/work?ms=1'));
    for (let i = 0; i < 10; i++) answers.push(await get(nodePort, '/work?ms=1'));
    const change = (await viewDropsVictim())!;
    const truth = (await sim.proxyTruth(ns, 'drain'))!;
    const toVictim = truth.connections.filter((c) => c.podUid === victim && c.result === 'routed');
    expect(toVictim.some((c) => c.at > terminating.at)).toBe(true);
    expect(toVictim.every((c) => c.at < change.at)).toBe(true);
    expect(answers.filter((a) => a.podUid === victim).length).toBeGreaterThan(0);
    expect(answers.slice(-10).every((a) => a.status === 200 && a.podUid !== victim)).toBe(true);
    // The pinned connection stayed on the victim and completed its work after the endpoint left the view.
    const finished = await long;
    expect(finished).toMatchObject({ status: 200, podUid: victim });
    expect(finished.body).toContain('"event":"done"');
    // The slice shows the victim not serving once its readiness fails, and then not at all.
    await slices.waitFor(
      (e) =>
        e.type !== 'DELETED' &&
        !(e.object.endpoints ?? []).some((x) => x.targetRef?.uid === victim) &&
        (e.object.endpoints ?? []).length >= 1,
      'the victim removed from the slice',
    );
    const states = slices.events
      .map((e) => e.object.endpoints?.find((x) => x.targetRef?.uid === victim)?.conditions)
      .filter(Boolean);
    expect(states.at(-1)).toEqual({ ready: false, serving: false, terminating: true });
    slices.stop();
  });

  it('refuses a nodePort out of range or taken, naming the field, and two simulated clusters never share one', async () => {
    const taken = (await core.createNamespacedService({ namespace: ns, body: nodePortService('first') })).spec!
      .ports![0]!.nodePort!;
    await expect(
      core.createNamespacedService({ namespace: ns, body: nodePortService('again', taken) }),
    ).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining(
        'spec.ports[0].nodePort: Invalid value: ' + taken + ': provided port is already allocated',
      ),
    });
    await expect(
      core.createNamespacedService({ namespace: ns, body: nodePortService('low', 8080) }),
    ).rejects.toMatchObject({ code: 422, body: expect.stringContaining('spec.ports[0].nodePort') });
    const other = await startSimCluster();
    try {
      const okc = new k8s.KubeConfig();
      okc.loadFromString(other.kubeconfig);
      const ocore = okc.makeApiClient(k8s.CoreV1Api);
      await expect(
        ocore.createNamespacedService({ namespace: ns, body: nodePortService('first', taken) }),
      ).rejects.toMatchObject({
        code: 422,
        body: expect.stringContaining(
          'spec.ports[0].nodePort: Invalid value: ' + taken + ': provided port is in use on this machine',
        ),
      });
      const mine = await ocore.createNamespacedService({ namespace: ns, body: nodePortService('first') });
      expect(mine.spec!.ports![0]!.nodePort).not.toBe(taken);
      // Deleting the Service frees its port for reuse.
      await core.deleteNamespacedService({ name: 'first', namespace: ns });
      const reused = await ocore.createNamespacedService({ namespace: ns, body: nodePortService('second', taken) });
      expect(reused.spec!.ports![0]!.nodePort).toBe(taken);
    } finally {
      await other.stop();
    }
  });

  it('deletes a Service with its EndpointSlices', async () => {
    await core.createNamespacedService({ namespace: ns, body: nodePortService('short') });
    const slices = await watchAll<k8s.V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=short' },
    );
    const placeholder = await slices.waitFor((e) => e.type === 'ADDED', 'the placeholder slice');
    expect(placeholder.object.endpoints ?? []).toEqual([]);
    await core.deleteNamespacedService({ name: 'short', namespace: ns });
    await slices.waitFor((e) => e.type === 'DELETED', 'the slice DELETED');
    slices.stop();
  });
});
