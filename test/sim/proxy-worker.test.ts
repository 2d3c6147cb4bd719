// The service proxy's data path runs apart from the sim's main thread (its API server, controllers and
// kubelet): a request through a NodePort is answered while that thread is blocked outright. In the main
// thread, the proxy served nothing until the thread was free again (bench:verify: +13 ms p95 at 1,000
// connections/s from such waits).
import { spawnSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { ServiceProxy } from '../../cluster/sim/service-proxy.ts';
import { Store } from '../../cluster/sim/store.ts';
import { labDeployment, nodePortService, watchAll } from '../support/sim-apps.ts';

const ns = 'default';
let sim: SimCluster;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
});

/** One GET in a child process: it prints the status (or the error) and exits; its own limit bounds a request that is never answered. */
const CLIENT = `
const req = require('node:http').get({ host: '127.0.0.1', port: Number(process.argv[1]), path: '/work?ms=1', agent: false }, (res) => {
  res.resume();
  res.on('end', () => { console.log('status ' + res.statusCode); process.exit(0); });
});
req.setTimeout(10000, () => { console.log('no answer'); process.exit(1); });
req.on('error', (e) => { console.log('error ' + e.code); process.exit(1); });
`;

describe('service proxy data path', () => {
  it("answers through a NodePort while the sim's main thread is blocked", async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const svc = await core.createNamespacedService({ namespace: ns, body: nodePortService('apart') });
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    const slices = await watchAll<k8s.V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=apart' },
    );
    await apps.createNamespacedDeployment({ namespace: ns, body: labDeployment('apart', { replicas: 1 }) });
    await slices.waitFor((e) => (e.object.endpoints ?? []).some((ep) => ep.conditions?.ready), 'a ready endpoint');
    slices.stop();
    await expect
      .poll(async () => (await sim.proxyTruth(ns, 'apart'))?.changes.at(-1)?.readyPodUids.length, { timeout: 10_000 })
      .toBe(1);
    // spawnSync holds this thread, the sim's main thread, until the child has its answer or gives up.
    const child = spawnSync(process.execPath, ['-e', CLIENT, String(nodePort)], { encoding: 'utf8' });
    expect(child.stdout.trim()).toBe('status 200');
    const routed = (await sim.proxyTruth(ns, 'apart'))!.connections.filter((c) => c.result === 'routed');
    expect(routed).toHaveLength(1);
  });

  it('fails a bind once its data path is gone, rather than wait for an answer that cannot come', async () => {
    const proxy = new ServiceProxy(new Store(), () => undefined);
    const worker = await (proxy as unknown as { worker: Promise<Worker> }).worker;
    await worker.terminate();
    expect(await proxy.bind(0)).toBe(false);
    expect(await proxy.truth(ns, 'none')).toBeUndefined();
    await proxy.stop();
  });
});
