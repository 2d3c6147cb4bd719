// bench:hook — the exec hook's own start-up on the simulated cluster. Target: exec_hook_start_lag_p95_ms ≤ 20.
// What the figures measure (and what not):
// - exec_hook_start_lag_p50/p95/max_ms: from the moment the sim's kubelet launches the hook (ground
//   truth) to the hook-start time the hook itself writes in the log: spawning the hook process and
//   its start-up, on this machine. Not the kubelet's reaction to the delete (before the launch), not
//   the log's delivery to the harness (after the line), and not a real node's CRI exec through
//   containerd and runc (the real node's figure comes from `npm run fidelity`).
// - exec_hook_proc_age_p95_ms: the hook process's age at its first line, as /proc counts it (10 ms
//   steps): its own start-up alone, without the sim's spawn.
import * as k8s from '@kubernetes/client-node';
import { startSimCluster } from '../cluster/sim/index.ts';
import { labPod } from '../test/support/sim.ts';
import { percentile } from './stats.ts';

const SAMPLES = 30;
const AT_ONCE = 5;
const sim = await startSimCluster();
const kc = new k8s.KubeConfig();
kc.loadFromString(sim.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);

async function sample(i: number): Promise<{ lag: number; age: number | null }> {
  const name = `hook-${i}`;
  // The finalizer keeps the pod, and so its log, once the container has exited.
  const body = labPod(name, {
    grace: 2,
    finalizers: ['termlab.io/hold'],
    lifecycle: { preStop: { exec: { command: ['/usr/local/bin/lab-hook', 'sleep', '0'] } } },
  });
  const { metadata } = await core.createNamespacedPod({ namespace: 'default', body });
  for (;;) {
    const pod = await core.readNamespacedPod({ name, namespace: 'default' });
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await core.deleteNamespacedPod({ name, namespace: 'default' });
  for (;;) {
    const log = await core.readNamespacedPodLog({ name, namespace: 'default' });
    const start = log.split('\n').find((l) => l.includes('"event":"hook-start"'));
    const launched = sim.truth(metadata!.uid!)?.hookStartAt;
    if (start && launched)
      return { lag: Date.parse(JSON.parse(start).time) - launched, age: JSON.parse(start).procAgeMs ?? null };
    await new Promise((r) => setTimeout(r, 50));
  }
}

const samples: { lag: number; age: number | null }[] = [];
for (let i = 0; i < SAMPLES; i += AT_ONCE) {
  samples.push(...(await Promise.all(Array.from({ length: Math.min(AT_ONCE, SAMPLES - i) }, (_, k) => sample(i + k)))));
}
await sim.stop();
const lags = samples.map((s) => s.lag);
const ages = samples.map((s) => s.age).filter((a): a is number => a !== null);
console.log(`exec_hook_samples: ${lags.length}`);
console.log(`exec_hook_start_lag_p50_ms: ${percentile(lags, 0.5).toFixed(1)}`);
console.log(`exec_hook_start_lag_p95_ms: ${percentile(lags, 0.95).toFixed(1)}`);
console.log(`exec_hook_start_lag_max_ms: ${Math.max(...lags).toFixed(1)}`);
// The hook process's age at its first line (10 ms steps), where /proc tells it.
console.log(
  `exec_hook_proc_age_p95_ms: ${ages.length ? percentile(ages, 0.95).toFixed(1) : 'not measured (no /proc)'}`,
);
