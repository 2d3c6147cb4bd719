// The simulated cluster's record of a container the memory limit killed: the kernel's SIGKILL, dated apart from
// the kubelet's (killSentAt), so the fidelity run can date its end by its death as containerd's TaskOOM line does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReady, labPod, type SimClient, startSimClient, terminatedState, watchPod } from '../support/sim.ts';

let client: SimClient;
beforeAll(async () => {
  client = await startSimClient();
});
afterAll(async () => {
  await client?.sim.stop();
});

describe('simulated cluster: a container killed for its memory', () => {
  it('is recorded as killed by the OOM killer, after TERM and no later than its exit, and not by the kubelet', async () => {
    const name = 'oom-truth';
    // Ignores TERM and allocates on it: only the 64 MiB limit ends it, well inside the 30 s grace.
    const pod = labPod(name, { mode: 'ignore-term', resources: { limits: { memory: '64Mi' } } });
    pod.spec!.containers[0]!.env!.push({ name: 'LAB_TERM_ALLOCATE_MIB', value: '512' });
    const watch = await watchPod(client.kc, 'default', name);
    try {
      const created = await client.core.createNamespacedPod({ namespace: 'default', body: pod });
      await watch.waitFor(isReady, 'the pod ready');
      await client.core.deleteNamespacedPod({ namespace: 'default', name });
      const ended = await watch.waitFor((e) => terminatedState(e) !== undefined, 'the container terminated');
      expect(terminatedState(ended)).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
      const truth = client.sim.truth(created.metadata!.uid!)!.containers!.lab!;
      expect(truth.killSentAt).toBeUndefined();
      expect(truth.oomKilledAt).toBeGreaterThan(truth.termSentAt!);
      expect(truth.oomKilledAt).toBeLessThanOrEqual(truth.exitedAt!);
    } finally {
      watch.stop();
    }
  });
});
