// The rules the sim's controllers and proxy transcribe from Kubernetes, checked on their own.
import { describe, expect, it } from 'vitest';
import { maxSurge, maxUnavailable, newRSNewReplicas } from '../../cluster/sim/deployment-util.ts';
import { strategicMergePatch } from '../../cluster/sim/patch.ts';
import { getPodsToDelete } from '../../cluster/sim/pod-ranking.ts';
import { categorizeEndpoints, type ViewEndpoint } from '../../cluster/sim/service-proxy.ts';
import type { KubeObject } from '../../cluster/sim/store.ts';

const deployment = (replicas: number, surge: number | string, unavailable: number | string) =>
  ({
    metadata: { name: 'd' },
    spec: {
      replicas,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } },
    },
  }) as unknown as KubeObject;

describe('deployment_util arithmetic', () => {
  it('rounds maxSurge up and maxUnavailable down, and never lets both be zero (ResolveFenceposts)', () => {
    expect([maxSurge(deployment(10, '25%', '25%')), maxUnavailable(deployment(10, '25%', '25%'))]).toEqual([3, 2]);
    expect([maxSurge(deployment(3, '25%', '25%')), maxUnavailable(deployment(3, '25%', '25%'))]).toEqual([1, 0]);
    expect(maxUnavailable(deployment(1, 0, '10%'))).toBe(1);
    expect(maxUnavailable(deployment(2, 0, 5))).toBe(2);
  });

  it('scales a new ReplicaSet up only as far as the surge allows (NewRSNewReplicas)', () => {
    const d = deployment(3, 1, 0);
    const rs = (replicas: number) =>
      ({ metadata: { name: `rs${replicas}` }, spec: { replicas } }) as unknown as KubeObject;
    const fresh = rs(0);
    expect(newRSNewReplicas(d, [rs(3), fresh], fresh)).toBe(1);
    const one = rs(1);
    expect(newRSNewReplicas(d, [rs(3), one], one)).toBe(1);
    expect(newRSNewReplicas(d, [rs(2), one], one)).toBe(2);
  });
});

describe('getPodsToDelete ranking', () => {
  const pod = (name: string, ready: boolean, created: string, readySince = created, phase = 'Running') =>
    ({
      metadata: { name, uid: name, creationTimestamp: created },
      spec: { nodeName: 'n' },
      status: {
        phase,
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: readySince }],
      },
    }) as unknown as KubeObject;

  it('deletes pending before running, not ready before ready, newer before older', () => {
    const now = Date.parse('2026-01-01T01:00:00Z');
    const old = pod('old', true, '2026-01-01T00:00:00Z');
    const recent = pod('recent', true, '2026-01-01T00:59:50Z');
    const unready = pod('unready', false, '2026-01-01T00:00:00Z');
    const pending = pod('pending', false, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'Pending');
    const all = [old, recent, unready, pending];
    expect(getPodsToDelete(all, all, 3, now).map((p) => p.metadata.name)).toEqual(['pending', 'unready', 'recent']);
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name and env by name, keeping what the patch does not name', () => {
    const target = {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'lab',
                image: 'a:1',
                env: [
                  { name: 'X', value: '1' },
                  { name: 'Y', value: '2' },
                ],
              },
              { name: 'side', image: 's:1' },
            ],
          },
        },
      },
    };
    const patched = strategicMergePatch(target, {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'lab' }, { name: 'side' }],
            containers: [{ name: 'lab', image: 'a:2', env: [{ name: 'Y', value: '3' }] }],
          },
        },
      },
    });
    expect(patched.spec.template.spec.containers).toEqual([
      {
        name: 'lab',
        image: 'a:2',
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', value: '3' },
        ],
      },
      { name: 'side', image: 's:1' },
    ]);
    expect(Object.keys(patched.spec.template.spec)).toEqual(['containers']);
    const removed = strategicMergePatch(target, {
      spec: { template: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } } },
    });
    expect(removed.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['lab']);
  });

  it('treats finalizers as a set and honours $deleteFromPrimitiveList', () => {
    const target = { metadata: { finalizers: ['a', 'b'] } };
    expect(strategicMergePatch(target, { metadata: { finalizers: ['b', 'c'] } }).metadata.finalizers).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(
      strategicMergePatch(target, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }).metadata.finalizers,
    ).toEqual(['b']);
  });
});

describe('kube-proxy endpoint choice (CategorizeEndpoints)', () => {
  const ep = (podUid: string, ready: boolean, serving: boolean, terminating: boolean): ViewEndpoint => ({
    podUid,
    ready,
    serving,
    terminating,
    ports: { http: 8080 },
  });
  it('uses ready endpoints, and serving terminating ones only when none is ready', () => {
    expect(categorizeEndpoints([ep('a', true, true, false), ep('b', false, true, true)]).map((e) => e.podUid)).toEqual([
      'a',
    ]);
    expect(
      categorizeEndpoints([ep('b', false, true, true), ep('c', false, false, true), ep('d', false, false, false)]).map(
        (e) => e.podUid,
      ),
    ).toEqual(['b']);
    expect(categorizeEndpoints([ep('c', false, false, true)])).toEqual([]);
  });
});
