// Two simulated clusters on one machine, with the same pod names: each reaches only its own pods.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import {
  isReady,
  labPod,
  terminatedState,
  startSimClient,
  watchPod,
  type SimClient,
  forwardTo,
} from '../support/sim.ts';

const clusters: SimClient[] = [];
beforeAll(async () => {
  clusters.push(await startSimClient(), await startSimClient());
});
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.sim.stop()));
});

async function readyPod(c: SimClient, name: string) {
  const body = labPod(name, {
    lifecycle: { preStop: { exec: { command: ['lab-hook', 'sleep', '100'] } } },
    grace: 5,
    finalizers: ['termlab.io/hold'],
  });
  const created = await c.core.createNamespacedPod({ namespace: 'default', body });
  const watch = await watchPod(c.kc, 'default', name, created.metadata!.resourceVersion);
  await watch.waitFor(isReady, `${name} ready`);
  return { uid: created.metadata!.uid!, watch };
}

async function podUidAt(base: string): Promise<string> {
  const res = await request(`${base}/work?ms=1`);
  await res.body.dump();
  return String(res.headers['x-pod-uid']);
}

describe('simulated clusters side by side', () => {
  it('runs the same pod name in two clusters; probes, port-forwards, direct requests and hook logs reach only their own pod', async () => {
    const pods = await Promise.all(clusters.map((c) => readyPod(c, 'same-name')));
    expect(pods[0]!.uid).not.toBe(pods[1]!.uid);
    for (const [i, c] of clusters.entries()) {
      const own = pods[i]!.uid;
      const forward = await forwardTo(c.kc, 'default', 'same-name', 8080);
      expect(await podUidAt(`http://127.0.0.1:${forward.localPort}`)).toBe(own);
      await forward.close();
      const live = await c.core.readNamespacedPod({ name: 'same-name', namespace: 'default' });
      expect(await podUidAt(`http://${live.status!.hostIP}:${live.spec!.containers[0]!.ports![0]!.hostPort}`)).toBe(
        own,
      );
    }
    await Promise.all(clusters.map((c) => c.core.deleteNamespacedPod({ name: 'same-name', namespace: 'default' })));
    // Each log read as soon as its own pod has ended: the kubelet removes a deleted pod's dead container, log and
    // all, at the next relist (container-gc.ts), so the second cluster's log may be gone after the first's wait.
    await Promise.all(
      clusters.map(async (c, i) => {
        await pods[i]!.watch.waitFor((e) => Boolean(terminatedState(e)), 'same-name terminated');
        pods[i]!.watch.stop();
        // The exec hook appended its lines to its own container's log, naming its own pod.
        const log = await c.core.readNamespacedPodLog({ name: 'same-name', namespace: 'default' });
        const hookLines = log
          .split('\n')
          .filter((l) => l.includes('"event":"hook-'))
          .map((l) => JSON.parse(l));
        expect(hookLines.map((l) => [l.event, l.podUid])).toEqual([
          ['hook-start', pods[i]!.uid],
          ['hook-end', pods[i]!.uid],
        ]);
      }),
    );
  });
});

describe('native Windows', () => {
  // process.platform made win32 before the CLI loads: the real code path, on any POSIX host.
  const asWindows = 'data:text/javascript,Object.defineProperty(process,"platform",{value:"win32"})';
  it.each([[['sim']], [['run', '--sim']]])('termlab %s says in one line that it needs WSL2, exit 2', async (args) => {
    const child = spawn(process.execPath, ['--import', asWindows, 'bin/termlab.js', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain('needs WSL2');
  });
});
