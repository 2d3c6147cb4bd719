// lifecycle.stopSignal on the simulated cluster (KEP-4960): dropped by the API server where ContainerStopSignals is
// off, validated and delivered by the kubelet's runtime where it is on. The pod runs the real lab server draining
// only on SIGQUIT (LAB_DRAIN_SIGNAL), so the signal that arrives decides how it ends: 0 drained, 17 cut at once.
import * as k8s from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { labPod, terminatedState, watchPod } from '../support/sim.ts';

const started: SimCluster[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

async function sim(kubeVersion: string, featureGates?: string) {
  const cluster = await startSimCluster({ kubeVersion, featureGates });
  started.push(cluster);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  return { cluster, kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}

/** A lab server that drains only on SIGQUIT and leaves at once (17) on TERM, asking to be stopped with SIGQUIT. */
function quitPod(name: string, stopSignal = 'SIGQUIT', os: string | null = 'linux'): k8s.V1Pod {
  const pod = labPod(name, { readinessProbe: undefined, grace: 10 });
  const container = pod.spec!.containers[0]!;
  container.env!.push({ name: 'LAB_DRAIN_SIGNAL', value: 'SIGQUIT' });
  container.lifecycle = { stopSignal };
  if (os) pod.spec!.os = { name: os };
  return pod;
}

/** Deletes the running pod and waits for its container's end as the status reports it. */
async function deleteAndWatchEnd(c: Awaited<ReturnType<typeof sim>>, created: k8s.V1Pod) {
  const name = created.metadata!.name!;
  const watch = await watchPod(c.kc, 'default', name, created.metadata!.resourceVersion);
  const running = await watch.waitFor((e) => e.pod.status?.phase === 'Running', `${name} running`);
  await c.core.deleteNamespacedPod({ name, namespace: 'default' });
  const ended = await watch.waitFor((e) => Boolean(terminatedState(e)), `${name} terminated`);
  watch.stop();
  return { running: running.pod, terminated: terminatedState(ended)! };
}

describe('lifecycle.stopSignal, gate off (the default in every minor, 1.38 too)', () => {
  it('the API server drops the field; the kubelet sends TERM and the SIGQUIT-drainer leaves at once with 17', async () => {
    const c = await sim('1.38');
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: quitPod('dropped') });
    // Silently, as the real one: the lifecycle held only the stop signal, so it goes too.
    expect(created.spec?.containers[0]?.lifecycle).toBeUndefined();
    const read = await c.core.readNamespacedPod({ namespace: 'default', name: 'dropped' });
    expect(read.spec?.containers[0]?.lifecycle).toBeUndefined();
    const { running, terminated } = await deleteAndWatchEnd(c, created);
    expect(running.status?.containerStatuses?.[0]?.stopSignal).toBeUndefined();
    expect(terminated.exitCode).toBe(17);
    expect(c.cluster.truth(created.metadata!.uid!)?.stopSignal).toBe('SIGTERM');
  });

  it("a Deployment's pod template loses it too (DropDisabledTemplateFields)", async () => {
    const c = await sim('1.38');
    const template = quitPod('unused');
    const created = await c.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'lab' } },
          template: { metadata: { labels: { app: 'lab' } }, spec: { ...template.spec!, restartPolicy: 'Always' } },
        },
      },
    });
    expect(created.spec?.template.spec?.containers[0]?.lifecycle).toBeUndefined();
  });

  it('without spec.os.name the field is dropped before validation: no error', async () => {
    const c = await sim('1.37');
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: quitPod('no-os', 'SIGQUIT', null),
    });
    expect(created.spec?.containers[0]?.lifecycle).toBeUndefined();
  });
});

describe('lifecycle.stopSignal, --feature-gates ContainerStopSignals=true', () => {
  it('1.38: the kubelet stops the container with SIGQUIT: the lab server drains and exits 0', async () => {
    const c = await sim('1.38', 'ContainerStopSignals=true');
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: quitPod('quit') });
    expect(created.spec?.containers[0]?.lifecycle).toEqual({ stopSignal: 'SIGQUIT' });
    const { running, terminated } = await deleteAndWatchEnd(c, created);
    // The runtime's stop signal in the status, as the kubelet shows it with the gate on.
    expect(running.status?.containerStatuses?.[0]?.stopSignal).toBe('SIGQUIT');
    expect(terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(c.cluster.truth(created.metadata!.uid!)?.stopSignal).toBe('SIGQUIT');
    // The Killing event is the usual one: the kubelet does not name the signal.
    const events = (
      await c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=quit' })
    ).items;
    expect(events.find((e) => e.reason === 'Killing')?.message).toBe('Stopping container lab');
  });

  it('1.37 too, where the real node turns the gate on to verify it', async () => {
    const c = await sim('1.37', 'ContainerStopSignals=true');
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: quitPod('quit37') });
    expect((await deleteAndWatchEnd(c, created)).terminated.exitCode).toBe(0);
  });

  it.each([
    [
      'no spec.os.name',
      quitPod('bad', 'SIGQUIT', null),
      'Pod "bad" is invalid: spec.containers[0].lifecycle.stopSignal: Forbidden: may not be set for containers with empty `spec.os.name`',
    ],
    [
      'a signal linux does not have',
      quitPod('bad', 'SIGFOO'),
      'Pod "bad" is invalid: spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGFOO": supported values: "SIGABRT", "SIGALRM", "SIGBUS"',
    ],
    [
      'a signal windows does not take',
      quitPod('bad', 'SIGQUIT', 'windows'),
      'Pod "bad" is invalid: spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGQUIT": supported values: "SIGKILL", "SIGTERM"',
    ],
  ])('validates it: %s is a 422 with the real message', async (_case, body, message) => {
    const c = await sim('1.38', 'ContainerStopSignals=true');
    const error = await c.core.createNamespacedPod({ namespace: 'default', body }).then(
      () => null,
      (e: k8s.ApiException<string>) => e,
    );
    expect(error?.code).toBe(422);
    expect(JSON.parse(error!.body).message).toContain(message);
  });
});
