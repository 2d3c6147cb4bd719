// bench:sim single-pod start-up: create -> Ready for pods made one after another (no contention).
import * as k8s from '@kubernetes/client-node';
import { startSimCluster } from '../cluster/sim/index.ts';
import { isReady, labPod, watchPod } from '../test/support/sim.ts';

const sim = await startSimCluster();
const kc = new k8s.KubeConfig();
kc.loadFromString(sim.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const times: number[] = [];
for (let i = 0; i < 10; i++) {
  const t0 = performance.now();
  const created = await core.createNamespacedPod({ namespace: 'default', body: labPod(`one-${i}`) });
  const watch = await watchPod(kc, 'default', `one-${i}`, created.metadata!.resourceVersion);
  times.push((await watch.waitFor(isReady, 'ready')).at - t0);
  watch.stop();
  await core.deleteNamespacedPod({ name: `one-${i}`, namespace: 'default', gracePeriodSeconds: 1 });
}
await sim.stop();
times.sort((a, b) => a - b);
console.log(`single_create_to_ready_p50_ms: ${times[4]!.toFixed(0)}`);
console.log(`single_create_to_ready_max_ms: ${times.at(-1)!.toFixed(0)}`);
