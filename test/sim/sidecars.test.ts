// Native sidecars (init containers with restartPolicy: Always) in the simulated kubelet, driven with
// @kubernetes/client-node as any client would: started in order before the app, each one's startup
// gating the next; stopped by kuberuntime_termination_order.go's order with killContainer's budgets.
// Every time compared here is the sim's own record (truth) or a container's own log, never the clock
// of this test against a number.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerTruth } from '../../cluster/sim/truth.ts';
import { isReady, startSimClient, watchPod, type SimClient } from '../support/sim.ts';

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c.sim.stop();
});

const IMAGE = 'termlab/lab-server:0.1.0';

interface Part {
  name: string;
  port: number;
  mode?: string;
  hookMs?: number;
  startupProbe?: k8s.V1Probe;
}

/** A lab server as one container of the pod: its own port (the pod's containers share one network), its mode and hook. */
function container(part: Part, native: boolean): k8s.V1Container {
  return {
    name: part.name,
    image: IMAGE,
    ...(native ? { restartPolicy: 'Always' } : {}),
    env: [
      { name: 'LAB_MODE', value: part.mode ?? 'graceful' },
      { name: 'PORT', value: String(part.port) },
      { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
    ],
    ports: [{ name: `p${part.port}`, containerPort: part.port }],
    readinessProbe: { httpGet: { path: '/readyz', port: part.port }, periodSeconds: 1 },
    ...(part.startupProbe ? { startupProbe: part.startupProbe } : {}),
    ...(part.hookMs !== undefined
      ? { lifecycle: { preStop: { exec: { command: ['lab-hook', 'sleep', String(part.hookMs)] } } } }
      : {}),
  };
}

function sidecarPod(name: string, grace: number, sidecars: Part[], apps: Part[]): k8s.V1Pod {
  return {
    metadata: { name, labels: { app: 'sidecars' } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: grace,
      initContainers: sidecars.map((s) => container(s, true)),
      containers: apps.map((a) => container(a, false)),
    },
  };
}

async function runningPod(pod: k8s.V1Pod) {
  const created = await c.core.createNamespacedPod({ namespace: 'default', body: pod });
  const watch = await watchPod(c.kc, 'default', pod.metadata!.name!, created.metadata!.resourceVersion);
  const ready = await watch.waitFor(isReady, `${pod.metadata!.name} ready`);
  return { watch, ready, uid: created.metadata!.uid! };
}

function containersOf(uid: string): Record<string, ContainerTruth> {
  const record = c.sim.truth(uid);
  if (!record?.containers) throw new Error(`the sim has no container record for pod ${uid}`);
  return record.containers;
}

async function deleteAndWaitGone(name: string, watch: Awaited<ReturnType<typeof runningPod>>['watch']) {
  await c.core.deleteNamespacedPod({ name, namespace: 'default' });
  await watch.waitFor((e) => e.type === 'DELETED', `${name} DELETED`, 40_000);
  watch.stop();
}

/** The budget killContainer gives: grace − the hook's whole seconds − the wait's whole seconds, then at least 2. */
const budgetOf = (grace: number, t: ContainerTruth) =>
  Math.max(2, grace - (t.hookElapsedSeconds ?? 0) - Math.trunc(t.turnWaitSeconds ?? 0));

describe('native sidecars: the API', () => {
  it('refuses an init container that is not a native sidecar, naming the field', async () => {
    const pod = sidecarPod('sc-regular-init', 5, [{ name: 'init', port: 8081 }], [{ name: 'app', port: 8080 }]);
    delete pod.spec!.initContainers![0]!.restartPolicy;
    await expect(c.core.createNamespacedPod({ namespace: 'default', body: pod })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('spec.initContainers[0].restartPolicy'),
    });
  });
});

describe('native sidecars: start', () => {
  it('starts the sidecars in order of declaration before the app, each after the one before it started', async () => {
    const name = 'sc-start';
    const { watch, ready, uid } = await runningPod(
      sidecarPod(
        name,
        5,
        [
          { name: 'sc1', port: 8081 },
          { name: 'sc2', port: 8082 },
        ],
        [{ name: 'app', port: 8080 }],
      ),
    );
    // A sidecar's log is read by its name; the pod's one main container is the default.
    expect(await c.core.readNamespacedPodLog({ name, namespace: 'default', container: 'sc2' })).toContain(
      '"event":"listening"',
    );
    expect(await c.core.readNamespacedPodLog({ name, namespace: 'default' })).toContain(`"port":`);
    const t = containersOf(uid);
    expect(t.sc1!.startedAt!).toBeLessThan(t.sc2!.startedAt!);
    expect(t.sc2!.startedAt!).toBeLessThan(t.app!.startedAt!);
    // Each start waits for the PLEG to have seen the one before running (the next SyncPod's computeInitContainerActions).
    expect(t.sc2!.startedAt!).toBeGreaterThanOrEqual(t.sc1!.startSeenAt!);
    expect(t.app!.startedAt!).toBeGreaterThanOrEqual(t.sc2!.startSeenAt!);
    const status = ready.pod.status!;
    expect(status.phase).toBe('Running');
    expect(status.initContainerStatuses?.map((s) => [s.name, s.started, Boolean(s.state?.running), s.ready])).toEqual([
      ['sc1', true, true, true],
      ['sc2', true, true, true],
    ]);
    expect(status.containerStatuses?.map((s) => [s.name, Boolean(s.state?.running)])).toEqual([['app', true]]);
    expect(status.conditions?.find((x) => x.type === 'Initialized')?.status).toBe('True');
    // Before the app started, the pod was Pending and not yet initialized.
    const early = watch.events.find(
      (e) =>
        (e.pod.status?.initContainerStatuses ?? []).some((s) => s.state?.running) &&
        !e.pod.status?.containerStatuses?.some((s) => s.state?.running),
    );
    expect(early?.pod.status?.phase).toBe('Pending');
    expect(early?.pod.status?.conditions?.find((x) => x.type === 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
    });
    await deleteAndWaitGone(name, watch);
  });

  it('a sidecar with a startupProbe holds the next container back until the probe succeeds', async () => {
    const name = 'sc-startup-probe';
    const probe: k8s.V1Probe = { httpGet: { path: '/readyz', port: 8081 }, initialDelaySeconds: 2, periodSeconds: 1 };
    const { watch, uid } = await runningPod(
      sidecarPod(name, 5, [{ name: 'sc1', port: 8081, startupProbe: probe }], [{ name: 'app', port: 8080 }]),
    );
    const t = containersOf(uid);
    expect(t.sc1!.startupSucceededAt! - t.sc1!.startedAt!).toBeGreaterThanOrEqual(2000);
    expect(t.app!.startedAt!).toBeGreaterThanOrEqual(t.sc1!.startupSucceededAt!);
    await deleteAndWaitGone(name, watch);
  });
});

describe('native sidecars: the termination order', () => {
  it('the app first; each sidecar after the app and the sidecars declared after it; every preStop at once', async () => {
    const name = 'sc-order';
    const grace = 10;
    const { watch, uid } = await runningPod(
      sidecarPod(
        name,
        grace,
        [
          { name: 'sc1', port: 8081 },
          { name: 'sc2', port: 8082, hookMs: 1000 },
        ],
        [{ name: 'app', port: 8080, hookMs: 2000 }],
      ),
    );
    await deleteAndWaitGone(name, watch);
    const t = containersOf(uid);
    const { app, sc1, sc2 } = t as Record<'app' | 'sc1' | 'sc2', ContainerTruth>;
    // The order of TERMs: the app, then sc2 once the app has exited, then sc1 once sc2 has.
    expect(app.termSentAt!).toBeLessThan(sc2.termSentAt!);
    expect(app.exitedAt!).toBeLessThanOrEqual(sc2.termSentAt!);
    expect(sc2.exitedAt!).toBeLessThanOrEqual(sc1.termSentAt!);
    // sc2's preStop ran at once, beside the app's, not after it: it began before the app's hook ended.
    expect(sc2.hookStartAt!).toBeLessThan(app.hookEndAt!);
    expect(sc2.hookEndAt!).toBeLessThan(app.termSentAt!);
    // Each budget: grace − hook − wait, in whole seconds, never below 2.
    // The app waits for its turn too (the pod has an ordering), on nothing: 0 whole seconds.
    expect(Math.trunc(app.turnWaitSeconds!)).toBe(0);
    for (const one of [app, sc1, sc2]) expect(one.stopGracePeriodSeconds).toBe(budgetOf(grace, one));
    expect(sc2.turnWaitSeconds!).toBeGreaterThan(0);
    expect(sc1.turnWaitSeconds!).toBeGreaterThan(0);
    expect(app.stopGracePeriodSeconds).toBe(8);
    expect(app.exitCode).toBe(0);
  });

  it('regular containers have no order: a second main container gets its hook and TERM beside the app', async () => {
    const name = 'sc-regular';
    const { watch, uid } = await runningPod(
      sidecarPod(
        name,
        10,
        [],
        [
          { name: 'app', port: 8080, hookMs: 1000 },
          { name: 'proxy', port: 8081 },
        ],
      ),
    );
    // Two main containers: a log needs its container named, as strategy.go validateContainer says.
    await expect(c.core.readNamespacedPodLog({ name, namespace: 'default' })).rejects.toMatchObject({
      code: 400,
      body: expect.stringContaining('choose one of: [app proxy]'),
    });
    expect(await c.core.readNamespacedPodLog({ name, namespace: 'default', container: 'proxy' })).toContain(
      '"event":"listening"',
    );
    await deleteAndWaitGone(name, watch);
    const { app, proxy } = containersOf(uid) as Record<'app' | 'proxy', ContainerTruth>;
    // No hook: the proxy's TERM comes while the app's hook still runs.
    expect(proxy.termSentAt!).toBeLessThan(app.hookEndAt!);
    expect(proxy.turnWaitSeconds).toBeUndefined();
  });

  it('when the grace runs out while they wait, the remaining sidecars are stopped together, each with the 2 s minimum', async () => {
    const name = 'sc-short';
    const grace = 3;
    // The app's hook takes 2 s of the 3: it gets the 2 s minimum after it and ignores its TERM, so it
    // runs until its KILL at about 4 s, past the grace; both sidecars stop waiting at 3 s.
    const { watch, uid } = await runningPod(
      sidecarPod(
        name,
        grace,
        [
          { name: 'sc1', port: 8081, mode: 'ignore-term' },
          { name: 'sc2', port: 8082, mode: 'ignore-term' },
        ],
        [{ name: 'app', port: 8080, hookMs: 2000, mode: 'ignore-term' }],
      ),
    );
    await deleteAndWaitGone(name, watch);
    const { app, sc1, sc2 } = containersOf(uid) as Record<'app' | 'sc1' | 'sc2', ContainerTruth>;
    expect(app).toMatchObject({ hookElapsedSeconds: 2, stopGracePeriodSeconds: 2, exitCode: 137 });
    for (const sidecar of [sc1, sc2]) {
      // Its whole grace went on the wait: 3 − 0 − 3 = 0, raised to the 2 s minimum, then KILL.
      expect(Math.trunc(sidecar.turnWaitSeconds!)).toBe(grace);
      expect(sidecar).toMatchObject({ stopGracePeriodSeconds: 2, exitCode: 137 });
      expect(sidecar.termSentAt!).toBeLessThan(app.exitedAt!);
      expect(sidecar.killSentAt! - sidecar.termSentAt!).toBeGreaterThanOrEqual(2000);
    }
    // Together: sc1 did not wait for sc2 to exit.
    expect(sc1.termSentAt!).toBeLessThan(sc2.exitedAt!);
  });
});
