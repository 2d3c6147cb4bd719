// A container start under way when the kubelet stops gives up: before, it started the process after the
// sim had stopped (a process no one would kill), and with its TMPDIR gone it was an unhandled rejection.
import { describe, expect, it } from 'vitest';
import { RuntimeManager, type RuntimePod } from '../../cluster/sim/kuberuntime.ts';
import { REAL_NODE_TIMING } from '../../cluster/sim/pleg.ts';
import { Store, type KubeObject } from '../../cluster/sim/store.ts';
import { simMinor } from '../../cluster/sim/versions.ts';

const images = { busybox: { entrypoint: ['/bin/sleep', '30'], paths: {}, env: {} } };

function pod(): { object: KubeObject; target: RuntimePod } {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'u-1' },
    spec: {
      dnsPolicy: 'Default',
      containers: [
        { name: 'a', image: 'busybox' },
        { name: 'b', image: 'busybox' },
      ],
    },
  } as unknown as KubeObject;
  return {
    object,
    target: { name: 'p', namespace: 'default', uid: 'u-1', hostPorts: new Map(), containers: new Map() },
  };
}

describe('the runtime stopping during SyncPod', () => {
  it('starts no container once stopped, and says which one it gave up on', async () => {
    const runtime = new RuntimeManager(new Store(), images, REAL_NODE_TIMING.runtime, simMinor(undefined).behaviour);
    const { object, target } = pod();
    const started: string[] = [];
    const syncing = runtime.startPod(object, target, (c) => started.push(c.spec.name));
    runtime.stop();
    await expect(syncing).rejects.toThrow('the runtime stopped before container a of default/p started');
    expect(started).toEqual([]);
    expect(target.containers.size).toBe(0);
  });

  it('starts every container of a pod while it runs', async () => {
    const runtime = new RuntimeManager(new Store(), images, REAL_NODE_TIMING.runtime, simMinor(undefined).behaviour);
    const { object, target } = pod();
    await runtime.startPod(object, target, () => {});
    try {
      expect([...target.containers.keys()]).toEqual(['a', 'b']);
    } finally {
      runtime.stop();
      for (const c of target.containers.values()) c.process.signal('SIGKILL');
      await Promise.all([...target.containers.values()].map((c) => c.process.exited));
    }
  });
});
