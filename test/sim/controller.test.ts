// The frame the sim's controllers share (cluster/sim/controller-queue.ts): which changes reach a
// controller's queue, and that stop lets go of the store.
import { describe, expect, it } from 'vitest';
import { Controller } from '../../cluster/sim/controller-queue.ts';
import { type KubeObject, Store } from '../../cluster/sim/store.ts';

/** A controller of ReplicaSets that records the keys it is asked to sync, as addPod enqueues them. */
class RecordingController extends Controller {
  readonly synced: string[] = [];
  private readonly until: { key: string; done: () => void };
  protected readonly syncHandler = (key: string) => {
    this.synced.push(key);
    if (key === this.until.key) this.until.done();
  };

  constructor(store: Store, until: { key: string; done: () => void }) {
    super('recording-controller', store);
    this.until = until;
    this.addEventHandler('pods', (e) => this.enqueueOwnerOrAdopters(e.object, 'ReplicaSet', 'replicasets'));
  }
}

const replicaSet = (namespace: string, name: string, app: string): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '', creationTimestamp: '' },
    spec: { replicas: 1, selector: { matchLabels: { app } } },
  }) as KubeObject;

const pod = (name: string, app: string, owner?: { kind: string; name: string }): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '',
      creationTimestamp: '',
      labels: { app },
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'v1', ...owner, uid: `uid-${owner.name}`, controller: true }] }
        : {}),
    },
    spec: { containers: [{ name: 'lab', image: 'termlab/lab-server:0.1.0' }] },
  }) as KubeObject;

describe('simulated controllers: the shared frame', () => {
  it("enqueues a pod's controller of its kind, or for an orphan every ReplicaSet of its namespace that selects it", async () => {
    const store = new Store();
    for (const rs of [
      replicaSet('default', 'a', 'x'),
      replicaSet('default', 'b', 'y'),
      replicaSet('other', 'c', 'x'),
      replicaSet('default', 'marker', 'z'),
    ])
      store.create('replicasets', rs);
    let done = () => {};
    const markerSynced = new Promise<void>((resolve) => {
      done = resolve;
    });
    const watchersBefore = store.watchers.size;
    const controller = new RecordingController(store, { key: 'default/marker', done });
    try {
      store.create('pods', pod('orphan', 'x'));
      store.create('pods', pod('owned', 'x', { kind: 'ReplicaSet', name: 'b' }));
      store.create('pods', pod('job-owned', 'x', { kind: 'Job', name: 'j' }));
      // The queue works keys in the order they came: once the marker's is synced, every earlier one was.
      store.create('pods', pod('last', 'z'));
      await markerSynced;
      expect(controller.synced).toEqual(['default/a', 'default/b', 'default/marker']);
    } finally {
      controller.stop();
    }
    expect(store.watchers.size).toBe(watchersBefore);
  });
});
