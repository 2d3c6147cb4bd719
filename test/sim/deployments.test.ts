// Deployments and ReplicaSets on the simulated cluster: real lab-server processes, judged from watches.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { labDeployment, strategic, watchAll } from '../support/sim-apps.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
let apps: k8s.AppsV1Api;
let core: k8s.CoreV1Api;
const ns = 'default';

beforeAll(async () => {
  sim = await startSimCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  core = kc.makeApiClient(k8s.CoreV1Api);
});
afterAll(async () => {
  await sim?.stop();
});

const isReady = (p: k8s.V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const available = (replicas: number) => (e: { object: k8s.V1Deployment }) =>
  e.object.status?.availableReplicas === replicas &&
  e.object.status?.updatedReplicas === replicas &&
  e.object.status?.replicas === replicas &&
  (e.object.status?.observedGeneration ?? 0) >= (e.object.metadata?.generation ?? 1);

/** Replays pod watch events into the set of pods alive after each one. */
function podStates(events: { type: string; object: k8s.V1Pod }[]) {
  const pods = new Map<string, k8s.V1Pod>();
  return events.map((e) => {
    if (e.type === 'DELETED') pods.delete(e.object.metadata!.uid!);
    else pods.set(e.object.metadata!.uid!, e.object);
    const live = [...pods.values()].filter((p) => !p.metadata?.deletionTimestamp);
    return { live: live.length, readyLive: live.filter(isReady).length, event: e };
  });
}

describe('Deployments on the simulated cluster', () => {
  it('scales a Deployment of the lab server up until it is available, with revision, owner references and events', async () => {
    const watch = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      fieldSelector: 'metadata.name=up',
    });
    await apps.createNamespacedDeployment({ namespace: ns, body: labDeployment('up', { replicas: 3 }) });
    const done = await watch.waitFor(available(3), 'three available replicas');
    watch.stop();
    expect(done.object.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual(
      expect.arrayContaining([
        ['Available', 'True', 'MinimumReplicasAvailable'],
        ['Progressing', 'True', 'NewReplicaSetAvailable'],
      ]),
    );
    expect(done.object.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    const rs = (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app.kubernetes.io/name=up' }))
      .items;
    expect(rs).toHaveLength(1);
    const hash = rs[0]!.metadata!.labels!['pod-template-hash'];
    expect(rs[0]!.metadata!.name).toBe(`up-${hash}`);
    expect(rs[0]!.metadata!.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Deployment',
        name: 'up',
        uid: done.object.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      }),
    ]);
    const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: `pod-template-hash=${hash}` })).items;
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      expect(pod.metadata!.name!.startsWith(`up-${hash}-`)).toBe(true);
      expect(pod.metadata!.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'ReplicaSet', name: rs[0]!.metadata!.name, controller: true }),
      ]);
      expect(pod.spec!.restartPolicy).toBe('Always');
      expect(isReady(pod)).toBe(true);
    }
    const events = (await core.listNamespacedEvent({ namespace: ns })).items;
    expect(
      events.filter((e) => e.reason === 'SuccessfulCreate' && e.involvedObject.name === rs[0]!.metadata!.name),
    ).toHaveLength(3);
    expect(
      events.some(
        (e) =>
          e.reason === 'ScalingReplicaSet' &&
          e.involvedObject.name === 'up' &&
          e.message === `Scaled up replica set ${rs[0]!.metadata!.name} to 3`,
      ),
    ).toBe(true);
    await apps.deleteNamespacedDeployment({ name: 'up', namespace: ns });
  });

  it.each([
    { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
    { replicas: 4, maxSurge: '25%', maxUnavailable: '25%' },
    { replicas: 3, maxSurge: 0, maxUnavailable: 1 },
  ])(
    'rolls out a template change within maxSurge $maxSurge and maxUnavailable $maxUnavailable',
    async ({ replicas, maxSurge, maxUnavailable }) => {
      const name = `roll-${String(maxSurge).replace('%', 'p')}-${String(maxUnavailable).replace('%', 'p')}`;
      const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
        fieldSelector: `metadata.name=${name}`,
      });
      await apps.createNamespacedDeployment({
        namespace: ns,
        body: labDeployment(name, { replicas, maxSurge, maxUnavailable, grace: 5 }),
      });
      await deployments.waitFor(available(replicas), 'the first rollout');
      const pods = await watchAll<k8s.V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, {
        labelSelector: `app.kubernetes.io/name=${name}`,
      });
      const sets = await watchAll<k8s.V1ReplicaSet>(kc, `/apis/apps/v1/namespaces/${ns}/replicasets`, {
        labelSelector: `app.kubernetes.io/name=${name}`,
      });
      await pods.waitFor((_, all) => all.length >= replicas, 'the current pods');
      const start = pods.events.length;
      const startSets = sets.events.length;
      const patched = await apps.patchNamespacedDeployment(
        {
          name,
          namespace: ns,
          body: {
            spec: {
              template: { spec: { containers: [{ name: 'lab', lifecycle: { preStop: { sleep: { seconds: 1 } } } }] } },
            },
          },
        },
        strategic,
      );
      expect(patched.metadata?.generation).toBe(2);
      expect(patched.spec?.template?.spec?.containers?.[0]?.image).toBe('termlab/lab-server:0.1.0');
      await deployments.waitFor(
        (e) => (e.object.metadata?.generation ?? 0) === 2 && available(replicas)(e),
        'the second rollout',
      );
      // Every old pod gone too.
      await pods.waitFor(
        (_, all) =>
          podStates(all).at(-1)!.live === replicas && all.filter((e) => e.type === 'DELETED').length >= replicas,
        'old pods deleted',
      );
      const surge =
        typeof maxSurge === 'number' ? maxSurge : Math.ceil((replicas * Number.parseInt(maxSurge, 10)) / 100);
      const unavailable =
        typeof maxUnavailable === 'number'
          ? maxUnavailable
          : Math.floor((replicas * Number.parseInt(maxUnavailable, 10)) / 100);
      // Pods: never more than replicas + maxSurge alive, never fewer than replicas - maxUnavailable ready and alive.
      const states = podStates(pods.events).slice(start);
      expect(Math.max(...states.map((s) => s.live))).toBeLessThanOrEqual(replicas + surge);
      expect(Math.min(...states.map((s) => s.readyLive))).toBeGreaterThanOrEqual(replicas - unavailable);
      // With room to surge, the rollout did surge.
      if (surge > 0) expect(Math.max(...states.map((s) => s.live))).toBeGreaterThan(replicas);
      // ReplicaSets: the sum of spec.replicas stays within the surge; the new one ends at replicas, the old at 0.
      const specs = new Map<string, number>();
      const sums: number[] = [];
      for (const e of sets.events.slice(startSets)) {
        specs.set(e.object.metadata!.name!, e.object.spec!.replicas!);
        sums.push([...specs.values()].reduce((a, b) => a + b, 0));
      }
      expect(Math.max(...sums)).toBeLessThanOrEqual(replicas + surge);
      const finalSets = (
        await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `app.kubernetes.io/name=${name}` })
      ).items;
      expect(
        finalSets
          .map((rs) => [rs.metadata!.annotations!['deployment.kubernetes.io/revision'], rs.spec!.replicas])
          .sort(),
      ).toEqual([
        ['1', 0],
        ['2', replicas],
      ]);
      // The new pods carry the new template's hook; the old pods kept theirs (none).
      const newHash = finalSets.find((rs) => rs.spec!.replicas === replicas)!.metadata!.labels!['pod-template-hash'];
      for (const s of states) {
        const pod = s.event.object;
        const hook = pod.spec!.containers[0]!.lifecycle?.preStop;
        expect(Boolean(hook)).toBe(pod.metadata!.labels!['pod-template-hash'] === newHash);
      }
      pods.stop();
      sets.stop();
      deployments.stop();
      await apps.deleteNamespacedDeployment({ name, namespace: ns });
    },
  );

  it('rolls out a Recreate Deployment only once no old pod runs', async () => {
    const body = labDeployment('recreate', { replicas: 2, mode: 'immediate' });
    body.spec!.strategy = { type: 'Recreate' };
    const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      fieldSelector: 'metadata.name=recreate',
    });
    await apps.createNamespacedDeployment({ namespace: ns, body });
    await deployments.waitFor(available(2), 'the first rollout');
    const pods = await watchAll<k8s.V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, {
      labelSelector: 'app.kubernetes.io/name=recreate',
    });
    await pods.waitFor((_, all) => all.length >= 2, 'the current pods');
    const oldUids = new Set(pods.events.map((e) => e.object.metadata!.uid!));
    await apps.patchNamespacedDeployment(
      { name: 'recreate', namespace: ns, body: { spec: { template: { metadata: { annotations: { rev: '2' } } } } } },
      strategic,
    );
    await deployments.waitFor(
      (e) => (e.object.metadata?.generation ?? 0) === 2 && available(2)(e),
      'the second rollout',
    );
    const firstNew = pods.events.findIndex((e) => !oldUids.has(e.object.metadata!.uid!));
    expect(firstNew).toBeGreaterThan(0);
    const before = pods.events.slice(0, firstNew);
    for (const uid of oldUids) {
      const ended = before.some(
        (e) =>
          e.object.metadata!.uid === uid &&
          (e.type === 'DELETED' || ['Failed', 'Succeeded'].includes(e.object.status?.phase ?? '')),
      );
      expect(ended, `old pod ${uid} ended before the first new pod`).toBe(true);
    }
    pods.stop();
    deployments.stop();
    await apps.deleteNamespacedDeployment({ name: 'recreate', namespace: ns });
  });

  it('scales a stuck rollout proportionally (the example in the Deployment docs: 8 old + 5 new, scaled to 15, become 11 + 7)', async () => {
    const name = 'proportional';
    const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      fieldSelector: `metadata.name=${name}`,
    });
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: labDeployment(name, { replicas: 10, maxSurge: 3, maxUnavailable: 2, mode: 'immediate' }),
    });
    await deployments.waitFor(available(10), 'ten available');
    const sets = await watchAll<k8s.V1ReplicaSet>(kc, `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      labelSelector: `app.kubernetes.io/name=${name}`,
    });
    // An image the node cannot pull: the new pods never become available and the rollout stalls.
    await apps.patchNamespacedDeployment(
      {
        name,
        namespace: ns,
        body: { spec: { template: { spec: { containers: [{ name: 'lab', image: 'example.org/missing:1' }] } } } },
      },
      strategic,
    );
    const sizes = () => {
      const latest = new Map<string, k8s.V1ReplicaSet>();
      for (const e of sets.events) latest.set(e.object.metadata!.name!, e.object);
      return [...latest.values()]
        .map((rs) => [rs.spec!.template!.spec!.containers[0]!.image, rs.spec!.replicas])
        .sort();
    };
    await sets.waitFor(
      () =>
        JSON.stringify(sizes()) ===
        JSON.stringify([
          ['example.org/missing:1', 5],
          ['termlab/lab-server:0.1.0', 8],
        ]),
      'the stalled rollout: 5 new, 8 old',
    );
    await apps.patchNamespacedDeploymentScale(
      { name, namespace: ns, body: { spec: { replicas: 15 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await sets.waitFor(
      () =>
        JSON.stringify(sizes()) ===
        JSON.stringify([
          ['example.org/missing:1', 7],
          ['termlab/lab-server:0.1.0', 11],
        ]),
      'proportional scaling: 7 new, 11 old',
    );
    sets.stop();
    deployments.stop();
    await apps.deleteNamespacedDeployment({ name, namespace: ns });
  });

  it('marks a rollout that makes no progress within progressDeadlineSeconds as ProgressDeadlineExceeded', async () => {
    const body = labDeployment('stuck', { replicas: 1 });
    body.spec!.progressDeadlineSeconds = 1;
    body.spec!.template.spec!.containers[0]!.image = 'example.org/missing:1';
    const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      fieldSelector: 'metadata.name=stuck',
    });
    await apps.createNamespacedDeployment({ namespace: ns, body });
    const exceeded = await deployments.waitFor(
      (e) =>
        e.object.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded') ??
        false,
      'ProgressDeadlineExceeded',
    );
    const progressing = exceeded.object.status!.conditions!.find((c) => c.type === 'Progressing')!;
    expect(progressing.status).toBe('False');
    expect(progressing.message).toMatch(/^ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.$/);
    expect(exceeded.object.status!.conditions!.find((c) => c.type === 'Available')!.status).toBe('False');
    deployments.stop();
    await apps.deleteNamespacedDeployment({ name: 'stuck', namespace: ns });
  });

  it('cascades a Foreground delete: pods, then the ReplicaSet, then the Deployment', async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: labDeployment('fg', { replicas: 2, mode: 'immediate' }),
    });
    const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      fieldSelector: 'metadata.name=fg',
    });
    await deployments.waitFor(available(2), 'available');
    const pods = await watchAll<k8s.V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, {
      labelSelector: 'app.kubernetes.io/name=fg',
    });
    const sets = await watchAll<k8s.V1ReplicaSet>(kc, `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      labelSelector: 'app.kubernetes.io/name=fg',
    });
    await apps.deleteNamespacedDeployment({ name: 'fg', namespace: ns, body: { propagationPolicy: 'Foreground' } });
    const gone = await deployments.waitFor((e) => e.type === 'DELETED', 'the Deployment DELETED');
    const marked = deployments.events.find((e) => e.object.metadata?.deletionTimestamp);
    expect(marked?.object.metadata?.finalizers).toContain('foregroundDeletion');
    const podsGone = pods.events.filter((e) => e.type === 'DELETED');
    const setGone = sets.events.find((e) => e.type === 'DELETED');
    expect(podsGone).toHaveLength(2);
    expect(setGone).toBeDefined();
    // Each blocking dependent was gone before its owner.
    for (const p of podsGone) expect(p.at).toBeLessThanOrEqual(setGone!.at);
    expect(setGone!.at).toBeLessThanOrEqual(gone.at);
    pods.stop();
    sets.stop();
    deployments.stop();
  });

  it('cascades a Background delete (a deletecollection by label) through the garbage collector, and an Orphan delete leaves the ReplicaSet without its owner', async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: labDeployment('bg', { replicas: 1, mode: 'immediate' }),
    });
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: labDeployment('orphan', { replicas: 1, mode: 'immediate' }),
    });
    const deployments = await watchAll<k8s.V1Deployment>(kc, `/apis/apps/v1/namespaces/${ns}/deployments`);
    await deployments.waitFor((e) => e.object.metadata?.name === 'bg' && available(1)(e), 'bg available');
    await deployments.waitFor((e) => e.object.metadata?.name === 'orphan' && available(1)(e), 'orphan available');
    const pods = await watchAll<k8s.V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, {
      labelSelector: 'app.kubernetes.io/name in (bg,orphan)',
    });
    const sets = await watchAll<k8s.V1ReplicaSet>(kc, `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      labelSelector: 'app.kubernetes.io/name in (bg,orphan)',
    });
    // deletecollection by label, Background by default.
    // The API answers a deletecollection with the list of what it deleted (not a Status).
    const listed = await apps.deleteCollectionNamespacedDeployment({
      namespace: ns,
      labelSelector: 'app.kubernetes.io/name=bg',
    });
    expect(listed.kind).toBe('DeploymentList');
    await deployments.waitFor((e) => e.type === 'DELETED' && e.object.metadata?.name === 'bg', 'bg Deployment DELETED');
    // The selector held: the other Deployment was not part of the collection.
    expect(
      (await apps.readNamespacedDeployment({ name: 'orphan', namespace: ns })).metadata?.deletionTimestamp,
    ).toBeUndefined();
    await sets.waitFor(
      (e) => e.type === 'DELETED' && e.object.metadata?.labels?.['app.kubernetes.io/name'] === 'bg',
      'bg ReplicaSet DELETED',
    );
    await pods.waitFor(
      (e) => e.type === 'DELETED' && e.object.metadata?.labels?.['app.kubernetes.io/name'] === 'bg',
      'bg pod DELETED',
    );

    await apps.deleteNamespacedDeployment({ name: 'orphan', namespace: ns, body: { propagationPolicy: 'Orphan' } });
    await deployments.waitFor(
      (e) => e.type === 'DELETED' && e.object.metadata?.name === 'orphan',
      'orphan Deployment DELETED',
    );
    const orphaned = await sets.waitFor(
      (e) =>
        e.object.metadata?.labels?.['app.kubernetes.io/name'] === 'orphan' &&
        !e.object.metadata?.ownerReferences?.length,
      'the ReplicaSet released',
    );
    expect(orphaned.type).toBe('MODIFIED');
    const left = (
      await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app.kubernetes.io/name=orphan' })
    ).items;
    expect(left).toHaveLength(1);
    expect(
      (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/name=orphan' })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      ),
    ).toHaveLength(1);
    await apps.deleteNamespacedReplicaSet({ name: left[0]!.metadata!.name!, namespace: ns });
    await pods.waitFor(
      (e) => e.type === 'DELETED' && e.object.metadata?.labels?.['app.kubernetes.io/name'] === 'orphan',
      'orphan pod DELETED with its ReplicaSet',
    );
    pods.stop();
    sets.stop();
    deployments.stop();
  });

  it('refuses a Deployment the API server would refuse, naming the field', async () => {
    const never = labDeployment('never');
    never.spec!.template.spec!.restartPolicy = 'Never';
    await expect(apps.createNamespacedDeployment({ namespace: ns, body: never })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('spec.template.spec.restartPolicy: Unsupported value: \\"Never\\"'),
    });
    const mismatch = labDeployment('mismatch');
    mismatch.spec!.selector = { matchLabels: { other: 'x' } };
    await expect(apps.createNamespacedDeployment({ namespace: ns, body: mismatch })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('spec.template.metadata.labels'),
    });
    const zero = labDeployment('zero', { maxSurge: 0, maxUnavailable: 0 });
    await expect(apps.createNamespacedDeployment({ namespace: ns, body: zero })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('spec.strategy.rollingUpdate.maxUnavailable'),
    });
  });
});
