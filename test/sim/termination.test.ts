import { Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { readLines } from '../support/labServer.ts';
import {
  isReady,
  labPod,
  startSimClient,
  terminatedState,
  watchPod,
  type SimClient,
  forwardTo,
} from '../support/sim.ts';

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c.sim.stop();
});

async function readyPod(name: string, spec: Parameters<typeof labPod>[1] = {}) {
  const created = await c.core.createNamespacedPod({ namespace: 'default', body: labPod(name, spec) });
  expect(created.status?.phase).toBe('Pending');
  const watch = await watchPod(c.kc, 'default', name, created.metadata!.resourceVersion);
  await watch.waitFor(isReady, `${name} ready`);
  return { created, watch, uid: created.metadata!.uid! };
}

async function logText(name: string) {
  return c.core.readNamespacedPodLog({ name, namespace: 'default' });
}

/**
 * The whole log, followed from now until the container ends, as termlab reads it: once a deleted
 * pod's container is gone the kubelet removes it, log and all (a read after that finds nothing).
 */
async function followedLog(name: string): Promise<{ whole: Promise<string> }> {
  let text = '';
  let done!: (t: string) => void;
  const ended = new Promise<string>((resolve) => {
    done = resolve;
  });
  const sink = new Writable({
    write(chunk, _enc, next) {
      text += chunk;
      next();
    },
  });
  // Piped into the sink, which finishes when the API ends the stream (the container ended).
  sink.on('finish', () => done(text));
  await new k8s.Log(c.kc).log('default', name, 'lab', sink, { follow: true });
  return { whole: ended };
}

describe('simulated kubelet: the life of a lab pod', () => {
  // The last column: the hook's own lines in the container log (an exec hook runs lab-hook inside the
  // container, an httpGet hook is served by the lab server; the sleep action leaves no trace).
  it.each([
    ['exec', { exec: { command: ['lab-hook', 'sleep', '1000'] } }, ['hook-start', 'hook-end']],
    ['httpGet', { httpGet: { path: '/hook/prestop?ms=1000', port: 8080 } }, ['hook-start', 'hook-end']],
    ['sleep', { sleep: { seconds: 1 } }, []],
  ])('runs a %s preStop inside the grace, then TERM, and the pod goes away', async (kind, preStop, hookLines) => {
    const name = `life-${kind.toLowerCase()}`;
    // Held by a finalizer once it has ended, so that its log can still be read.
    const { watch, uid } = await readyPod(name, {
      lifecycle: { preStop: preStop as never },
      grace: 10,
      finalizers: ['termlab.io/hold'],
    });
    const before = await logText(name);
    expect(before).toContain('"event":"listening"');
    const followed = await followedLog(name);
    const deleteSent = Date.now();
    const deleted = await c.core.deleteNamespacedPod({ name, namespace: 'default', body: { preconditions: { uid } } });
    const deleteAnswered = Date.now();
    expect(deleted.metadata?.deletionGracePeriodSeconds).toBe(10);
    // The grace from the moment of the delete, in the API's whole seconds.
    const deadline = new Date(String(deleted.metadata?.deletionTimestamp)).getTime();
    expect(deadline).toBeGreaterThanOrEqual(Math.floor((deleteSent + 10_000) / 1000) * 1000);
    expect(deadline).toBeLessThanOrEqual(deleteAnswered + 10_000);
    const terminated = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    expect(terminatedState(terminated)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(terminated.pod.status?.phase).toBe('Succeeded');
    const lines = (await followed.whole)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; time: string });
    await c.core.patchNamespacedPod({
      name,
      namespace: 'default',
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
    const gone = await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    expect(terminatedState(gone)?.exitCode).toBe(0);
    const truth = c.sim.truth(uid)!;
    expect(truth.hookElapsedSeconds).toBe(1);
    expect(truth.stopGracePeriodSeconds).toBe(9);
    expect(truth.termSentAt! - truth.hookStartAt!).toBeGreaterThanOrEqual(1000);
    const events = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    // A readiness probe may fail between TERM and the exit (Unhealthy), as on a real node: a race, so left out.
    expect(events.items.map((e) => e.reason).filter((r) => r !== 'Unhealthy')).toEqual([
      'Scheduled',
      'MissingClusterDNS',
      'Pulled',
      'Created',
      'Started',
      'Killing',
    ]);
    watch.stop();
    // What the container itself saw: the hook's lines (or none), all of them before the TERM.
    expect(lines.filter((l) => l.event.startsWith('hook-')).map((l) => l.event)).toEqual(hookLines);
    const term = lines.findIndex((l) => l.event === 'signal');
    expect(term).toBeGreaterThan(0);
    expect(lines.slice(term).some((l) => l.event.startsWith('hook-'))).toBe(false);
  });

  it('cuts an in-flight port-forwarded request when a hook outlasts the grace: TERM at grace, SIGKILL 2 s later, 137', async () => {
    const name = 'hook-outlasts-grace';
    const { watch, uid } = await readyPod(name, {
      lifecycle: { preStop: { exec: { command: ['lab-hook', 'sleep', '10000'] } } },
      grace: 2,
      finalizers: ['termlab.io/hold'],
    });
    const forward = await forwardTo(c.kc, 'default', name, 8080);
    const followed = await followedLog(name);
    const res = await request(`http://127.0.0.1:${forward.localPort}/work?ms=30000&id=long`);
    expect(res.headers['x-pod-uid']).toBe(uid);
    let accepted = false;
    const body = readLines(res.body, (line) => {
      if (line.event === 'accepted') accepted = true;
    });
    await expect.poll(() => accepted).toBe(true);
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    const terminated = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    expect(terminatedState(terminated)).toMatchObject({ exitCode: 137, reason: 'Error' });
    expect(terminated.pod.status?.phase).toBe('Failed');
    const { lines, error } = await body;
    expect(lines.some((l) => l.event === 'done')).toBe(false);
    expect(error).not.toBeNull();
    const truth = c.sim.truth(uid)!;
    expect(truth).toMatchObject({ hookTimedOut: true, hookElapsedSeconds: 2, stopGracePeriodSeconds: 2 });
    expect(truth.termSentAt! - truth.hookStartAt!).toBeGreaterThanOrEqual(2000);
    expect(truth.killSentAt! - truth.termSentAt!).toBeGreaterThanOrEqual(2000);
    const log = await followed.whole;
    expect(log).toContain('"event":"hook-start"');
    expect(log).toContain('"signal":"SIGTERM"');
    // The hook ran inside the container: it dies with it, and the exec fails, as on a real node.
    await expect
      .poll(async () =>
        (
          await c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })
        ).items.map((e) => e.reason),
      )
      .toContain('FailedPreStopHook');
    await c.core.patchNamespacedPod({
      name,
      namespace: 'default',
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    await forward.close();
    watch.stop();
  });

  it('lets a port-forwarded request complete within the grace and exits 0', async () => {
    const name = 'completes';
    const { watch } = await readyPod(name, { grace: 10 });
    const forward = await forwardTo(c.kc, 'default', name, 8080);
    const res = await request(`http://127.0.0.1:${forward.localPort}/work?ms=1500`);
    const body = readLines(res.body);
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    const { lines, error } = await body;
    expect(error).toBeNull();
    expect(lines.at(-1)).toMatchObject({ event: 'done' });
    expect(terminatedState(await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated'))?.exitCode).toBe(0);
    await forward.close();
    watch.stop();
  });

  it('holds a finalized pod with its final status until the finalizer is removed', async () => {
    const name = 'held';
    const { watch } = await readyPod(name, { finalizers: ['termlab.io/hold'], mode: 'immediate' });
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    await watch.waitFor((e) => e.pod.metadata?.deletionGracePeriodSeconds === 0, 'the kubelet delete with grace 0');
    const held = await c.core.readNamespacedPod({ name, namespace: 'default' });
    expect(held.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 17, reason: 'Error' });
    expect(watch.events.some((e) => e.type === 'DELETED')).toBe(false);
    await c.core.patchNamespacedPod({
      name,
      namespace: 'default',
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
    const gone = await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    expect(terminatedState(gone)?.exitCode).toBe(17);
    watch.stop();
  });

  it('runs two pods on the same container port, each published at its own host port on 127.0.0.1', async () => {
    const a = await readyPod('twin-a');
    const b = await readyPod('twin-b');
    const published = async (name: string) => {
      const pod = await c.core.readNamespacedPod({ name, namespace: 'default' });
      expect(pod.status?.podIP).toBe('127.0.0.1');
      return pod.spec!.containers[0]!.ports![0]!.hostPort!;
    };
    const [portA, portB] = [await published('twin-a'), await published('twin-b')];
    expect(portA).not.toBe(portB);
    for (const [port, uid] of [
      [portA, a.uid],
      [portB, b.uid],
    ] as const) {
      const res = await request(`http://127.0.0.1:${port}/work?ms=1`);
      expect(res.headers['x-pod-uid']).toBe(uid);
      await res.body.dump();
    }
    for (const name of ['twin-a', 'twin-b']) await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await a.watch.waitFor((e) => e.type === 'DELETED', 'a gone');
    await b.watch.waitFor((e) => e.type === 'DELETED', 'b gone');
  });
});
