// bench:sim, one pod at a time (no contention): create -> Ready, and each termination step's
// error against the kubelet's rules, from the sim's ground truth.
import * as k8s from '@kubernetes/client-node';
import { startSimCluster } from '../cluster/sim/index.ts';
import { isReady, labPod, terminatedState, watchPod } from '../test/support/sim.ts';
import { percentile } from './stats.ts';

const sim = await startSimCluster();
const kc = new k8s.KubeConfig();
kc.loadFromString(sim.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const hooks = [
  { exec: { command: ['lab-hook', 'sleep', '1000'] } },
  { sleep: { seconds: 1 } },
  { httpGet: { path: '/hook/prestop?ms=1500', port: 8080 } },
  { sleep: { seconds: 3 } },
];
const readyTimes: number[] = [];
const errors: number[] = [];
for (let i = 0; i < 8; i++) {
  const name = `one-${i}`;
  sim.fault({ fault: 'ignore-sigterm', namespace: 'default', name });
  const t0 = performance.now();
  const created = await core.createNamespacedPod({
    namespace: 'default',
    body: labPod(name, { grace: 2, lifecycle: { preStop: hooks[i % hooks.length] as never } }),
  });
  const watch = await watchPod(kc, 'default', name, created.metadata!.resourceVersion);
  readyTimes.push((await watch.waitFor(isReady, 'ready')).at - t0);
  await core.deleteNamespacedPod({ name, namespace: 'default' });
  await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
  watch.stop();
  const t = sim.truth(created.metadata!.uid!)!;
  const hookWait = t.hookTimedOut ? t.gracePeriodSeconds! * 1000 : t.hookEndAt! - t.hookStartAt!;
  const remainder = Math.max(2, t.gracePeriodSeconds! - Math.trunc(hookWait / 1000));
  errors.push(
    Math.abs(t.termSentAt! - t.hookStartAt! - hookWait),
    Math.abs(t.killSentAt! - t.termSentAt! - remainder * 1000),
  );
}
await sim.stop();
console.log(`single_create_to_ready_p50_ms: ${percentile(readyTimes, 0.5).toFixed(0)}`);
console.log(`single_create_to_ready_max_ms: ${Math.max(...readyTimes).toFixed(0)}`);
console.log(`single_termination_step_error_max_ms: ${Math.max(...errors).toFixed(2)}`);
