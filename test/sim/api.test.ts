import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReady, labPod, startSimClient, terminatedState, watchPod, type SimClient } from '../support/sim.ts';

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c.sim.stop();
});

const apiError = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return error as k8s.ApiException<string>;
  }
  throw new Error('expected the call to fail');
};

describe('simulated API server', () => {
  it('resumes a watch from a resourceVersion without losing events, and answers a too-old one with 410', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: labPod('resume', { mode: 'immediate' }),
    });
    const first = await watchPod(c.kc, 'default', 'resume', created.metadata!.resourceVersion);
    await first.waitFor(isReady, 'ready');
    const lastSeen = first.events.at(-1)!.pod.metadata!.resourceVersion!;
    expect(c.sim.fault({ fault: 'drop-watches' })).toMatch(/dropped [1-9]/);
    await expect.poll(() => first.ended).not.toBeNull();
    // Changes while no watch is open...
    await c.core.deleteNamespacedPod({ name: 'resume', namespace: 'default' });
    // ...are all replayed when the watch resumes from the last version it saw.
    const resumed = await watchPod(c.kc, 'default', 'resume', lastSeen);
    await resumed.waitFor((e) => e.type === 'DELETED', 'DELETED after resume');
    const versions = resumed.events.map((e) => Number(e.pod.metadata!.resourceVersion));
    expect(versions[0]).toBeGreaterThan(Number(lastSeen));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(resumed.events.some((e) => e.pod.metadata?.deletionTimestamp && !terminatedState(e))).toBe(true);
    expect(resumed.events.some((e) => terminatedState(e)?.exitCode === 17)).toBe(true);

    c.sim.fault({ fault: 'expire-next-watch' });
    const expired: { type: string; obj: any }[] = [];
    const done = new Promise((resolve) => {
      void new k8s.Watch(c.kc).watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: lastSeen },
        (type, obj) => expired.push({ type, obj }),
        resolve,
      );
    });
    await done;
    expect(expired).toEqual([
      { type: 'ERROR', obj: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) },
    ]);
  });

  it('keeps a pod with an unknown image Waiting, with a reason and an event', async () => {
    const body = labPod('no-image', { image: 'example.org/not-here:1' });
    const created = await c.core.createNamespacedPod({ namespace: 'default', body });
    const watch = await watchPod(c.kc, 'default', 'no-image', created.metadata!.resourceVersion);
    const waiting = await watch.waitFor(
      (e) => Boolean(e.pod.status?.containerStatuses?.[0]?.state?.waiting),
      'waiting',
    );
    expect(waiting.pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ErrImagePull');
    expect(waiting.pod.status?.phase).toBe('Pending');
    const events = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=no-image',
    });
    expect(events.items.find((e) => e.type === 'Warning')?.message).toContain('example.org/not-here:1');
    watch.stop();
    await c.core.deleteNamespacedPod({ name: 'no-image', namespace: 'default' });
    await expect(c.core.readNamespacedPod({ name: 'no-image', namespace: 'default' })).rejects.toMatchObject({
      code: 404,
    });
  });

  it('ends a pod past its activeDeadlineSeconds with DeadlineExceeded, through the grace', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: labPod('deadline', { deadline: 3, grace: 3, lifecycle: { preStop: { sleep: { seconds: 1 } } } }),
    });
    const watch = await watchPod(c.kc, 'default', 'deadline', created.metadata!.resourceVersion);
    const ended = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    expect(ended.pod.status).toMatchObject({ phase: 'Failed', reason: 'DeadlineExceeded' });
    const condition = (type: string) => ended.pod.status?.conditions?.find((x) => x.type === type)?.status;
    expect(condition('PodReadyToStartContainers')).toBe('False');
    // The verdict turns Ready off at once, but the terminal phase waits until the container has stopped.
    const readyAt = watch.events.findIndex((e) => isReady(e));
    const verdict = watch.events.slice(readyAt).find((e) => !isReady(e));
    expect(verdict?.pod.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    expect(verdict?.pod.status).toMatchObject({ phase: 'Running' });
    expect(verdict?.pod.status?.reason).toBeUndefined();
    const truth = c.sim.truth(created.metadata!.uid!)!;
    // Measured from startTime as the API holds it, in whole seconds.
    expect(truth.killingAt).toBeGreaterThanOrEqual(new Date(ended.pod.status!.startTime!).getTime() + 3000);
    expect(truth.hookElapsedSeconds).toBe(1);
    const events = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=deadline',
    });
    expect(events.items.map((e) => e.reason)).toContain('DeadlineExceeded');
    watch.stop();
  });

  it('checks UID preconditions, lets a later delete only shorten the grace, and fails a delete on demand', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: labPod('deletes', {
        grace: 20,
        finalizers: ['termlab.io/hold'],
        env: [{ name: 'LAB_MODE', value: 'graceful' }],
      }),
    });
    const watch = await watchPod(c.kc, 'default', 'deletes', created.metadata!.resourceVersion);
    await watch.waitFor(isReady, 'ready');
    expect(
      (
        await apiError(
          c.core.deleteNamespacedPod({
            name: 'deletes',
            namespace: 'default',
            body: { preconditions: { uid: 'someone-else' } },
          }),
        )
      ).code,
    ).toBe(409);
    c.sim.fault({ fault: 'fail-next-delete', namespace: 'default', name: 'deletes' });
    expect((await apiError(c.core.deleteNamespacedPod({ name: 'deletes', namespace: 'default' }))).code).toBe(500);
    c.sim.fault({ fault: 'ignore-sigterm', namespace: 'default', name: 'deletes' });
    const first = await c.core.deleteNamespacedPod({ name: 'deletes', namespace: 'default', gracePeriodSeconds: 3 });
    expect(first.metadata?.deletionGracePeriodSeconds).toBe(3);
    const longer = await c.core.deleteNamespacedPod({ name: 'deletes', namespace: 'default', gracePeriodSeconds: 60 });
    expect(longer.metadata?.deletionTimestamp).toEqual(first.metadata?.deletionTimestamp);
    // SIGTERM was swallowed, so only SIGKILL ends it: 137 after the 3 s grace.
    const ended = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    expect(terminatedState(ended)?.exitCode).toBe(137);
    expect(c.sim.truth(created.metadata!.uid!)).toMatchObject({ termSuppressed: true, stopGracePeriodSeconds: 3 });
    await c.core.patchNamespacedPod(
      { name: 'deletes', namespace: 'default', body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    watch.stop();
  });

  it('lists by label selector and creates namespaces', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'class-a' } } });
    await c.core.createNamespacedPod({
      namespace: 'class-a',
      body: { ...labPod('labelled'), metadata: { name: 'labelled', labels: { 'termlab.io/owner': 'ada' } } },
    });
    await c.core.createNamespacedPod({
      namespace: 'class-a',
      body: { ...labPod('other'), metadata: { name: 'other', labels: { 'termlab.io/owner': 'bob' } } },
    });
    const mine = await c.core.listNamespacedPod({ namespace: 'class-a', labelSelector: 'termlab.io/owner=ada' });
    expect(mine.items.map((p) => p.metadata?.name)).toEqual(['labelled']);
    const notMine = await c.core.listNamespacedPod({
      namespace: 'class-a',
      labelSelector: 'termlab.io/owner,termlab.io/owner notin (ada)',
    });
    expect(notMine.items.map((p) => p.metadata?.name)).toEqual(['other']);
    expect((await apiError(c.core.createNamespacedPod({ namespace: 'nowhere', body: labPod('x') }))).code).toBe(404);
    expect((await apiError(c.core.createNamespacedPod({ namespace: 'class-a', body: labPod('labelled') }))).code).toBe(
      409,
    );
    for (const name of ['labelled', 'other'])
      await c.core.deleteNamespacedPod({ name, namespace: 'class-a', gracePeriodSeconds: 0 });
  });
});
