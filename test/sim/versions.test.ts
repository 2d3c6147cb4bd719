// The simulator emulates one Kubernetes minor at a time: its /version, its event messages and its
// PLEG's timing (cluster/sim/versions.ts), each as that release's source has it.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import * as k8s from '@kubernetes/client-node';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { simMinor } from '../../cluster/sim/versions.ts';
import { labPod, terminatedState, watchPod } from '../support/sim.ts';

const started: SimCluster[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

async function sim(kubeVersion?: string, relistPeriodMs?: number) {
  const cluster = await startSimCluster({
    kubeVersion,
    ...(relistPeriodMs ? { kubelet: { relistPeriodMs, relistDurationMs: 0 } } : {}),
  });
  started.push(cluster);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  return { cluster, kc, core: kc.makeApiClient(k8s.CoreV1Api), version: kc.makeApiClient(k8s.VersionApi) };
}

const running = (e: { pod: k8s.V1Pod }) => e.pod.status?.phase === 'Running';

describe('the emulated minor', () => {
  it('reports 1.37 by default and the minor it was asked for', async () => {
    const latest = await sim();
    expect(await latest.version.getCode()).toMatchObject({
      major: '1',
      minor: '37',
      gitVersion: 'v1.37.2-termlab-sim',
    });
    const older = await sim('1.35');
    expect(await older.version.getCode()).toMatchObject({ minor: '35', gitVersion: 'v1.35.4-termlab-sim' });
    const node = (await older.core.listNode()).items[0];
    expect(node?.status?.nodeInfo?.kubeletVersion).toBe('v1.35.4-termlab-sim');
  });

  it('refuses a minor it does not emulate, naming the ones it does', () => {
    expect(() => simMinor('1.33')).toThrow(/emulates 1\.34, 1\.35, 1\.36, 1\.37, 1\.38; got "1\.33"/);
    expect(simMinor('v1.36.3').minor).toBe('1.36');
    expect(simMinor('v1.38.0-beta.0').minor).toBe('1.38');
  });

  it('emulates 1.38 as v1.38.0-beta.0 when asked, and stays on 1.37 by default until a 1.38.0 is served', async () => {
    const beta = await sim('1.38');
    expect(await beta.version.getCode()).toMatchObject({ minor: '38', gitVersion: 'v1.38.0-beta.0-termlab-sim' });
    const node = (await beta.core.listNode()).items[0];
    expect(node?.status?.nodeInfo?.kubeletVersion).toBe('v1.38.0-beta.0-termlab-sim');
    expect(simMinor(undefined).minor).toBe('1.37');
  });

  it.each([
    ['1.34', 'Created container: lab', 'Started container lab'],
    ['1.35', 'Container created', 'Container started'],
    ['1.37', 'Container created', 'Container started'],
    ['1.38', 'Container created', 'Container started'],
  ])(
    "%s: the kubelet's Created and Started events carry that release's messages",
    async (minor, created, startedMessage) => {
      const { kc, core } = await sim(minor);
      const pod = await core.createNamespacedPod({
        namespace: 'default',
        body: labPod('msgs', { readinessProbe: undefined }),
      });
      const watch = await watchPod(kc, 'default', 'msgs', pod.metadata!.resourceVersion);
      await watch.waitFor(running, 'running');
      watch.stop();
      const events = (
        await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=msgs' })
      ).items;
      expect(events.find((e) => e.reason === 'Created')?.message).toBe(created);
      expect(events.find((e) => e.reason === 'Started')?.message).toBe(startedMessage);
    },
  );

  it('1.37 sees its containers start without waiting for a relist (PLEGOnDemandRelist); 1.35 waits for one', async () => {
    // Relists a minute apart: only a relist of the one pod, after the sync that started it, can show Running.
    const PERIOD_MS = 60_000;
    const [newer, older] = await Promise.all([sim('1.37', PERIOD_MS), sim('1.35', PERIOD_MS)]);
    const [a, b] = await Promise.all(
      [newer, older].map((s) =>
        s.core.createNamespacedPod({ namespace: 'default', body: labPod('starts', { readinessProbe: undefined }) }),
      ),
    );
    const watch = await watchPod(newer.kc, 'default', 'starts', a!.metadata!.resourceVersion);
    await watch.waitFor(running, 'running on 1.37');
    watch.stop();
    // Same start, same clock: the 1.35 kubelet has not relisted yet, so its pod is still Pending.
    const olderPod = await older.core.readNamespacedPod({ namespace: 'default', name: 'starts' });
    expect(olderPod.metadata?.uid).toBe(b!.metadata!.uid);
    expect(olderPod.status?.phase).toBe('Pending');
  });

  it.each([
    ['1.37', true],
    ['1.34', false],
  ])(
    '%s: a followed log ends after the terminated status only where the log reader looks again a second later: %s',
    async (minor, afterTerminated) => {
      const { kc, core } = await sim(minor);
      const pod = await core.createNamespacedPod({
        namespace: 'default',
        body: labPod('follow', { readinessProbe: undefined }),
      });
      const watch = await watchPod(kc, 'default', 'follow', pod.metadata!.resourceVersion);
      await watch.waitFor(running, 'running');
      const sink = new PassThrough();
      sink.resume();
      const ended = new Promise<boolean>((resolve) =>
        sink.on('end', () => resolve(watch.events.some((e) => Boolean(terminatedState(e))))),
      );
      await new k8s.Log(kc).log('default', 'follow', 'lab', sink, { follow: true });
      // An idle graceful server exits at TERM right after its last line: the status of its end comes from
      // killPod's return, which 1.34 follows (the follow ended at the exit) and 1.37 precedes (up to 1 s).
      await core.deleteNamespacedPod({ name: 'follow', namespace: 'default' });
      expect(await ended).toBe(afterTerminated);
      watch.stop();
    },
  );
});
