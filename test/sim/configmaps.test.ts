// ConfigMaps on the simulated cluster (the witness keeps its records in them): create, read, a stale
// write refused, list by label, watch, delete, and the API server's validation of data.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimClient, type SimClient } from '../support/sim.ts';

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c.sim.stop();
});

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return error as k8s.ApiException<string>;
  }
  throw new Error('expected the call to fail');
};

describe('simulated ConfigMaps', () => {
  it('creates, reads, replaces with a resourceVersion precondition, lists by label, watches and deletes', async () => {
    const seen: string[] = [];
    const watch = await new k8s.Watch(c.kc).watch(
      '/api/v1/namespaces/default/configmaps',
      { labelSelector: 'kind=record' },
      (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name} ${obj.data?.v ?? ''}`),
      () => {},
    );
    const made = await c.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'r1', labels: { kind: 'record' } }, data: { v: '1' } },
    });
    expect(made.metadata?.uid).toBeTruthy();
    const read = await c.core.readNamespacedConfigMap({ name: 'r1', namespace: 'default' });
    expect(read.data).toEqual({ v: '1' });
    const replaced = await c.core.replaceNamespacedConfigMap({
      name: 'r1',
      namespace: 'default',
      body: { ...read, data: { v: '2' } },
    });
    expect(replaced.data).toEqual({ v: '2' });
    // A write made from the older read is refused: the record it would overwrite has moved on.
    const stale = await failure(
      c.core.replaceNamespacedConfigMap({ name: 'r1', namespace: 'default', body: { ...read, data: { v: '3' } } }),
    );
    expect(stale.code).toBe(409);
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'other' }, data: {} } });
    const listed = await c.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'kind=record' });
    expect(listed.items.map((i) => i.metadata?.name)).toEqual(['r1']);
    await c.core.deleteNamespacedConfigMap({ name: 'r1', namespace: 'default' });
    expect((await failure(c.core.readNamespacedConfigMap({ name: 'r1', namespace: 'default' }))).code).toBe(404);
    await expect.poll(() => seen).toEqual(['ADDED r1 1', 'MODIFIED r1 2', 'DELETED r1 2']);
    watch.abort();
  });

  it('refuses data that is not a map of strings, naming the key', async () => {
    const bad = await failure(
      c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'bad' }, data: { n: 5 as unknown as string } },
      }),
    );
    expect(bad.code).toBe(422);
    expect(String(bad.body)).toContain('data[n]');
  });
});
