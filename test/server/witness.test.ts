// The witness (LAB_MODE=witness) as a real process against the simulated cluster: it records a deleted lab
// pod (its end, grace, events and when it was gone) in a ConfigMap; killed and started again, it loses
// no record and catches up on what happened while it was down.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WitnessRecord } from '../../server/contract.ts';
import { type EventedProcess, spawnTs } from '../support/processes.ts';
import {
  isReady,
  labPod,
  simCA,
  simToken,
  startSimClient,
  terminatedState,
  watchPod,
  type SimClient,
} from '../support/sim.ts';

let c: SimClient;
let env: NodeJS.ProcessEnv;
const running = new Set<EventedProcess>();
const SELECTOR = 'app.kubernetes.io/managed-by=termlab,termlab.io/env=termlab-class';

beforeAll(async () => {
  c = await startSimClient();
  for (const name of ['termlab-alice', 'termlab-witness'])
    await c.core.createNamespace({ body: { metadata: { name } } });
  const dir = mkdtempSync(join(tmpdir(), 'termlab-witness-'));
  writeFileSync(join(dir, 'token'), simToken(c.sim));
  writeFileSync(join(dir, 'ca.crt'), simCA(c.sim));
  env = {
    LAB_MODE: 'witness',
    WITNESS_API_SERVER: c.kc.getCurrentCluster()!.server,
    WITNESS_TOKEN_FILE: join(dir, 'token'),
    WITNESS_CA_FILE: join(dir, 'ca.crt'),
    WITNESS_RECORDS_NAMESPACE: 'termlab-witness',
    WITNESS_CLASS: 'termlab',
    WITNESS_SELECTOR: SELECTOR,
  };
});
afterAll(async () => {
  for (const p of running) p.child.kill('SIGKILL');
  await c.sim.stop();
});

function startWitness(): EventedProcess {
  const p = spawnTs('server/main.ts', [], env);
  running.add(p);
  void p.exited.then(() => running.delete(p));
  return p;
}

function classPod(name: string, extra: { finalizers?: string[] } = {}): k8s.V1Pod {
  const pod = labPod(name, { mode: 'immediate', grace: 5, ...extra });
  pod.metadata!.labels = {
    'app.kubernetes.io/managed-by': 'termlab',
    'termlab.io/env': 'termlab-class',
    'termlab.io/owner': 'system-serviceaccount-termlab-alice',
    'termlab.io/scenario': 'short-grace',
    'termlab.io/run': 'run-test',
  };
  return pod;
}

async function recordOf(uid: string): Promise<{ record: WitnessRecord; version: string }> {
  const cm = await c.core.readNamespacedConfigMap({ name: `pod-${uid}`, namespace: 'termlab-witness' });
  return { record: JSON.parse(cm.data!['record.json']!), version: cm.metadata!.resourceVersion! };
}

const recorded = (uid: string, gone: boolean) => (e: { event: string; [k: string]: unknown }) =>
  e.event === 'recorded' && e.uid === uid && e.gone === gone;

describe('the witness', () => {
  it('records a deleted lab pod; killed and restarted, it loses no record and catches up', async () => {
    const first = startWitness();
    await first.waitForEvent((e) => e.event === 'listed', 'the first list', 30_000);

    const made = await c.core.createNamespacedPod({ namespace: 'termlab-alice', body: classPod('one') });
    const uid = made.metadata!.uid!;
    const w = await watchPod(c.kc, 'termlab-alice', 'one', made.metadata!.resourceVersion);
    await first.waitForEvent(recorded(uid, false), 'the pod recorded');
    // Ready: its TERM handler is in place, so it leaves with immediate mode's own code.
    await w.waitFor(isReady, 'the pod ready');
    await c.core.deleteNamespacedPod({ name: 'one', namespace: 'termlab-alice' });
    const end = await w.waitFor((e) => terminatedState(e) !== undefined, 'the container terminated');
    await first.waitForEvent(recorded(uid, true), 'the pod recorded as gone');
    w.stop();

    const { record, version } = await recordOf(uid);
    const terminated = terminatedState(end) as unknown as Record<string, string>;
    expect(record).toMatchObject({
      uid,
      namespace: 'termlab-alice',
      name: 'one',
      student: 'alice',
      ownerLabel: 'system-serviceaccount-termlab-alice',
      scenario: 'short-grace',
      runId: 'run-test',
      grace: 5,
      terminationGracePeriodSeconds: 5,
      goneSeenBy: 'watch',
      lateDeletion: false,
    });
    // The watch hands the API's JSON as it came: times as the API wrote them.
    const raw = end.pod as unknown as { metadata: { deletionTimestamp: string } };
    expect(record.deletionTimestamp).toBe(raw.metadata.deletionTimestamp);
    expect(record.containers).toEqual([
      {
        name: 'lab',
        init: false,
        exitCode: 17,
        reason: terminated.reason,
        startedAt: terminated.startedAt,
        finishedAt: terminated.finishedAt,
      },
    ]);
    expect(record.events.map((e) => e.reason)).toContain('Killing');
    expect(record.goneAt).not.toBeNull();

    // A second pod, held by a finalizer, seen running; then the witness is killed (no goodbye)...
    const held = await c.core.createNamespacedPod({
      namespace: 'termlab-alice',
      body: classPod('two', { finalizers: ['termlab.io/hold'] }),
    });
    const heldUid = held.metadata!.uid!;
    await first.waitForEvent(recorded(heldUid, false), 'the second pod recorded');
    const w2 = await watchPod(c.kc, 'termlab-alice', 'two', held.metadata!.resourceVersion);
    await w2.waitFor(isReady, 'the second pod ready');
    first.child.kill('SIGKILL');
    await first.exited;
    // ...and while it is down the pod is deleted and its container ends.
    await c.core.deleteNamespacedPod({ name: 'two', namespace: 'termlab-alice' });
    await w2.waitFor((e) => terminatedState(e) !== undefined, 'the second container terminated');

    const second = startWitness();
    const listed = await second.waitForEvent((e) => e.event === 'listed', 'the relist', 30_000);
    expect(listed).toMatchObject({ pods: 1, records: 2 });
    // The first record is untouched: read back, not rewritten.
    expect(await recordOf(uid)).toEqual({ record, version });
    expect(second.events.some((e) => e.event === 'recorded' && e.uid === uid)).toBe(false);
    // The second has what happened while no witness ran.
    const caught = (await recordOf(heldUid)).record;
    expect(caught.deletionTimestamp).not.toBeNull();
    // First seen after the kubelet's own final delete: said so, since its grace (0) is not the student's.
    expect(caught.lateDeletion).toBe(true);
    expect(caught.containers[0]).toMatchObject({ name: 'lab', exitCode: 17 });

    await c.core.patchNamespacedPod(
      { name: 'two', namespace: 'termlab-alice', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
      undefined,
    );
    await second.waitForEvent(recorded(heldUid, true), 'the second pod recorded as gone');
    w2.stop();
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.events.at(-1)).toMatchObject({ event: 'witness-end', records: 2 });
  });

  it('refuses a bad setting with exit 2, naming it', async () => {
    const p = spawnTs('server/main.ts', [], { ...env, WITNESS_SELECTOR: '' });
    expect(await p.exited).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toMatch(/WITNESS_SELECTOR: expected the lab pods' label selector/);
  });
});
