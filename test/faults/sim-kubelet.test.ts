// The simulated kubelet under the faults the real node showed (v1.37.2, 2026-12-01; the measurements
// are in cluster/sim/faults.ts and kubelet.ts): a deleted pod's log is gone once its container has
// ended, and a stopped kubelet (SIGSTOP) holds its statuses, its TERM and the streams it proxies,
// while the hook and containerd's SIGKILL run on time. Every wait is on an event; times are only
// ordered against each other, on the one clock the sim and this test share.
import { Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLines } from '../support/labServer.ts';
import {
  forwardTo,
  isReady,
  labPod,
  startSimClient,
  terminatedState,
  watchPod,
  type SimClient,
} from '../support/sim.ts';

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c.sim.stop();
});

const now = () => performance.timeOrigin + performance.now();
/** The kubelet's container GC runs every minute: what the ContainerDied cleanup left is gone by then. */
const CONTAINER_GC_MS = 60_000;

async function readyPod(name: string, spec: Parameters<typeof labPod>[1]) {
  const created = await c.core.createNamespacedPod({
    namespace: 'default',
    body: labPod(name, { finalizers: ['termlab.io/hold'], ...spec }),
  });
  const watch = await watchPod(c.kc, 'default', name, created.metadata!.resourceVersion);
  await watch.waitFor(isReady, `${name} ready`);
  return { watch, uid: created.metadata!.uid! };
}

/** The log followed from now until the container ends, each line with when it arrived here. */
async function follow(name: string) {
  const lines: { text: string; at: number }[] = [];
  let partial = '';
  let done!: () => void;
  const ended = new Promise<void>((resolve) => {
    done = resolve;
  });
  const sink = new Writable({
    write(chunk, _enc, next) {
      partial += chunk;
      for (let i = partial.indexOf('\n'); i >= 0; i = partial.indexOf('\n')) {
        lines.push({ text: partial.slice(0, i), at: now() });
        partial = partial.slice(i + 1);
      }
      next();
    },
  });
  // The body is piped into the sink, which finishes when the API ends the stream (the container ended).
  sink.on('finish', () => done());
  await new k8s.Log(c.kc).log('default', name, 'lab', sink, { follow: true });
  const event = (e: string) => lines.find((l) => l.text.includes(`"event":"${e}"`));
  return { lines, ended, event };
}

/** Resolves when the sim's kubelet has reached a step of this pod's kill (its ground truth). */
async function truthReaches(uid: string, step: 'hookStartAt' | 'termSentAt'): Promise<void> {
  await expect.poll(() => c.sim.truth(uid)?.[step], { timeout: 20_000, interval: 10 }).toBeDefined();
}

const release = (name: string) =>
  c.core.patchNamespacedPod({ name, namespace: 'default', body: [{ op: 'remove', path: '/metadata/finalizers' }] });

describe('a deleted pod whose container has ended', () => {
  it('keeps its log for a follow opened before; a read after finds only "unable to retrieve container logs"', async () => {
    const name = 'log-gone';
    const { watch, uid } = await readyPod(name, { grace: 5 });
    const log = await follow(name);
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    await log.ended;
    expect(log.event('listening')).toBeDefined();
    expect(log.event('exit')).toBeDefined();
    // The kubelet removes the container on the PLEG's ContainerDied (or its GC a minute on); the API answers 200 with the error as the body.
    await expect
      .poll(() => c.core.readNamespacedPodLog({ name, namespace: 'default' }), {
        timeout: CONTAINER_GC_MS + 5_000,
        interval: 200,
      })
      .toBe(`unable to retrieve container logs for sim://${uid}-lab`);
    await release(name);
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    watch.stop();
  }, 90_000);
});

describe('a stopped kubelet (pause-kubelet)', () => {
  it("inside the hook: the hook ends on time, but TERM, the statuses and the log lines wait for SIGCONT; the pause counts in the hook's seconds", async () => {
    const name = 'paused-hook';
    const { watch, uid } = await readyPod(name, {
      grace: 5,
      lifecycle: { preStop: { exec: { command: ['lab-hook', 'sleep', '3000'] } } },
    });
    const log = await follow(name);
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await truthReaches(uid, 'hookStartAt');
    const resumed = new Promise<number>((resolve) => c.sim.kubeletPause.once('resumed', () => resolve(now())));
    const pausedAt = now();
    expect(c.sim.fault({ fault: 'pause-kubelet', seconds: 4 })).toMatch(/paused for 4 s/);
    const resumedAt = await resumed;
    const terminated = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    await log.ended;
    const truth = c.sim.truth(uid)!;
    expect(truth.hookEndAt!).toBeLessThan(resumedAt);
    expect(truth.termSentAt!).toBeGreaterThanOrEqual(resumedAt);
    // grace 5 − 4 whole seconds (the pause in them) is below the minimum: 2 s after TERM.
    expect(truth.hookElapsedSeconds).toBeGreaterThanOrEqual(4);
    expect(truth.stopGracePeriodSeconds).toBe(2);
    expect(
      watch.events.filter((e) => e.at + performance.timeOrigin > pausedAt && e.at + performance.timeOrigin < resumedAt),
    ).toEqual([]);
    // The hook wrote its end inside the pause; the kubelet served the line only once it ran.
    const end = log.event('hook-end')!;
    expect(Date.parse(JSON.parse(end.text).time)).toBeLessThan(resumedAt);
    expect(end.at).toBeGreaterThanOrEqual(resumedAt);
    expect(terminatedState(terminated)?.exitCode).toBe(0);
    await release(name);
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    watch.stop();
  }, 60_000);

  it("after TERM: containerd's SIGKILL comes on time, its status only once the kubelet runs", async () => {
    const name = 'paused-kill';
    const { watch, uid } = await readyPod(name, { grace: 2, mode: 'ignore-term' });
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await truthReaches(uid, 'termSentAt');
    const resumed = new Promise<number>((resolve) => c.sim.kubeletPause.once('resumed', () => resolve(now())));
    c.sim.fault({ fault: 'pause-kubelet', seconds: 4 });
    const resumedAt = await resumed;
    const terminated = await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    const truth = c.sim.truth(uid)!;
    expect(truth.killSentAt!).toBeLessThan(resumedAt);
    expect(truth.exitedAt!).toBeLessThan(resumedAt);
    expect(terminated.at + performance.timeOrigin).toBeGreaterThanOrEqual(resumedAt);
    expect(terminatedState(terminated)?.exitCode).toBe(137);
    await release(name);
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    watch.stop();
  }, 60_000);

  it('holds a port-forwarded answer (the kubelet proxies the stream) until it runs again', async () => {
    const name = 'paused-forward';
    const { watch } = await readyPod(name, { grace: 5 });
    const forward = await forwardTo(c.kc, 'default', name, 8080);
    const log = await follow(name);
    const res = await request(`http://127.0.0.1:${forward.localPort}/work?ms=1000&id=held`);
    let resumedAt = Number.POSITIVE_INFINITY;
    c.sim.kubeletPause.once('resumed', () => {
      resumedAt = now();
    });
    let doneAt = 0;
    const body = readLines(res.body, (line) => {
      if (line.event === 'accepted') c.sim.fault({ fault: 'pause-kubelet', seconds: 3 });
      if (line.event === 'done') doneAt = now();
    });
    const { error } = await body;
    expect(error).toBeNull();
    // The server finished its work inside the pause; its answer came through only after it.
    await expect.poll(() => log.event('completed')).toBeDefined();
    expect(Date.parse(JSON.parse(log.event('completed')!.text).time)).toBeLessThan(resumedAt);
    expect(doneAt).toBeGreaterThanOrEqual(resumedAt);
    await forward.close();
    await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await watch.waitFor((e) => Boolean(terminatedState(e)), 'terminated');
    await release(name);
    await watch.waitFor((e) => e.type === 'DELETED', 'DELETED');
    watch.stop();
  }, 60_000);
});
