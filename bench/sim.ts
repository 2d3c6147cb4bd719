// bench:sim — pod start-up, termination accuracy against the kubelet's rules, and 50 pods at once.
// Targets: create -> Ready under 300 ms; under 10 ms of error on any termination step; 50 pods alive.
import * as k8s from '@kubernetes/client-node';
import { startSimCluster } from '../cluster/sim/index.ts';
import { isReady, labPod, terminatedState, watchPod } from '../test/support/sim.ts';
import { percentile } from './stats.ts';

const PODS = 50;
const sim = await startSimCluster();
const kc = new k8s.KubeConfig();
kc.loadFromString(sim.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);

// Hooks of 1-2 s (exec, sleep action, httpGet) with graces of 1-3 s: some end in time, some are cut.
const hooks = [
  { exec: { command: ['lab-hook', 'sleep', '1000'] } },
  { sleep: { seconds: 1 } },
  { httpGet: { path: '/hook/prestop?ms=1500', port: 8080 } },
  { sleep: { seconds: 2 } },
];
const started = performance.now();
const pods = await Promise.all(
  Array.from({ length: PODS }, async (_, i) => {
    const name = `bench-${i}`;
    const body = labPod(name, { grace: 1 + (i % 3), lifecycle: { preStop: hooks[i % hooks.length] as never } });
    // SIGTERM is swallowed so every pod runs the whole sequence to SIGKILL.
    sim.fault({ fault: 'ignore-sigterm', namespace: 'default', name });
    const t0 = performance.now();
    const created = await core.createNamespacedPod({ namespace: 'default', body });
    const watch = await watchPod(kc, 'default', name, created.metadata!.resourceVersion);
    const ready = await watch.waitFor(isReady, `${name} ready`, 60_000);
    return { name, uid: created.metadata!.uid!, watch, readyMs: ready.at - t0 };
  }),
);
const alive = (await core.listNamespacedPod({ namespace: 'default' })).items.filter(
  (p) => p.status?.phase === 'Running',
).length;
const allReadyMs = performance.now() - started;

await Promise.all(pods.map((p) => core.deleteNamespacedPod({ name: p.name, namespace: 'default' })));
const exits = await Promise.all(
  pods.map(
    async (p) =>
      terminatedState(await p.watch.waitFor((e) => Boolean(terminatedState(e)), `${p.name} terminated`, 60_000))
        ?.exitCode,
  ),
);
for (const p of pods) p.watch.stop();

// Each step against its rule, from the sim's own record.
const errors: number[] = [];
for (const p of pods) {
  const t = sim.truth(p.uid)!;
  const grace = t.gracePeriodSeconds!;
  const hookWait = t.hookTimedOut ? grace * 1000 : t.hookEndAt! - t.hookStartAt!;
  errors.push(Math.abs(t.termSentAt! - t.hookStartAt! - hookWait)); // TERM when the hook ends or the grace runs out
  const remainder = Math.max(2, grace - Math.trunc(hookWait / 1000));
  errors.push(Math.abs(t.stopGracePeriodSeconds! - remainder) * 1000); // whole-second truncation, 2 s minimum
  errors.push(Math.abs(t.killSentAt! - t.termSentAt! - remainder * 1000)); // SIGKILL when the remainder runs out
}
await sim.stop();

const readyTimes = pods.map((p) => p.readyMs);
console.log(`pods: ${PODS}`);
console.log(`pods_alive_at_once: ${alive}`);
console.log(`exit_137: ${exits.filter((e) => e === 137).length}`);
console.log(`create_to_ready_p50_ms: ${percentile(readyTimes, 0.5).toFixed(0)}`);
console.log(`create_to_ready_p95_ms: ${percentile(readyTimes, 0.95).toFixed(0)}`);
console.log(`all_${PODS}_ready_ms: ${allReadyMs.toFixed(0)}`);
console.log(`termination_step_error_p95_ms: ${percentile(errors, 0.95).toFixed(2)}`);
console.log(`termination_step_error_max_ms: ${Math.max(...errors).toFixed(2)}`);
