// A cluster whose API server drops lifecycle.stopSignal (the ContainerStopSignals gate off: pkg/api/pod/util.go
// dropContainerStopSignals) does so without a word. The run must not: it finds the field gone on the live pod and
// says so in its output and its observation. The cluster here is the simulated one behind a proxy that drops the
// field from each pod created, as that API server does; what the kubelet then sends is the simulator's business.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { ObservationSchema } from '../../harness/observation/schema.ts';
import { type ApiProxy, startApiProxy } from '../support/api-proxy.ts';
import { runCli } from '../support/cli.ts';

let sim: SimCluster;
let proxy: ApiProxy;
let dir: string;
/** What each pod create asked for, before the proxy dropped it. */
const asked: { stopSignal: unknown; os: unknown }[] = [];
beforeAll(async () => {
  sim = await startSimCluster();
  proxy = await startApiProxy(sim.server, {
    rewrite: (req, url, body) => {
      if (req.method !== 'POST' || !/^\/api\/v1\/namespaces\/[^/]+\/pods$/.test(url.pathname)) return null;
      const pod = JSON.parse(body.toString('utf8'));
      for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
        if (!c.lifecycle?.stopSignal) continue;
        asked.push({ stopSignal: c.lifecycle.stopSignal, os: pod.spec.os });
        delete c.lifecycle.stopSignal;
        if (!Object.keys(c.lifecycle).length) delete c.lifecycle;
      }
      return Buffer.from(JSON.stringify(pod));
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'termlab-stop-dropped-'));
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  writeFileSync(join(dir, 'kubeconfig'), proxy.kubeconfig(kc.getCurrentUser()!.token!, 'default'));
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  await sim?.stop();
});

describe('a stopSignal the cluster dropped', () => {
  it('is said in the run output as it is found, and recorded in the observation', async () => {
    const out = join(dir, 'run');
    const r = await runCli([
      'run',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--transport',
      'direct',
      '--scenarios',
      'manifests/stop-signal.yaml',
      '--only',
      'quit-stop-signal',
      '--output-dir',
      out,
    ]);
    const note =
      'lifecycle.stopSignal was dropped by this cluster: the ContainerStopSignals gate is off (alpha in 1.37); SIGTERM ran instead of SIGQUIT';
    expect(r.stdout).toContain(`quit-stop-signal: ${note}`);
    const o = ObservationSchema.parse(JSON.parse(readFileSync(join(out, 'quit-stop-signal.observation.json'), 'utf8')));
    expect(o.pod?.containers[0]?.lifecycle?.stopSignal).toBeUndefined();
    expect(o.pod?.dropped).toEqual([{ container: 'lab', field: 'lifecycle.stopSignal', asked: 'SIGQUIT', note }]);
    // The pod was asked for with the field and the OS the API requires beside it: the cluster, not termlab, dropped it.
    expect(asked).toEqual([{ stopSignal: 'SIGQUIT', os: { name: 'linux' } }]);
  }, 300_000);
});
