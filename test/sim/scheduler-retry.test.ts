// A pod whose ports the node could not publish (no file descriptor left, no free port) is not left Pending
// for good: as kube-scheduler requeues a pod whose binding failed, it is tried again after a backoff.
import { describe, expect, it } from 'vitest';
import { inform } from '../../cluster/sim/controller-queue.ts';
import { NodePorts } from '../../cluster/sim/ports.ts';
import { Scheduler } from '../../cluster/sim/scheduler.ts';
import { type KubeObject, Store } from '../../cluster/sim/store.ts';

/** Fails its first reservation as a process out of file descriptors does, then reserves as ever. */
class PortsThatFailOnce extends NodePorts {
  private failed = false;
  override async reserve(): Promise<number> {
    if (this.failed) return super.reserve();
    this.failed = true;
    throw new Error('cannot hold host port 20001 on 127.0.0.1: bind EMFILE 127.0.0.1:20001');
  }
}

function pod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '', creationTimestamp: '' },
    spec: { containers: [{ name: 'lab', image: 'termlab/lab-server:0.1.0', ports: [{ containerPort: 8080 }] }] },
  } as KubeObject;
}

describe('simulated scheduler: a binding that failed', () => {
  it('is tried again after a backoff, and the pod is bound', async () => {
    const store = new Store();
    const ports = new PortsThatFailOnce();
    const scheduler = new Scheduler(store, {}, ports);
    const seen: string[] = [];
    const bound = new Promise<KubeObject>((resolve) => {
      inform(store, 'events', (e) => {
        if (e.type === 'ADDED') seen.push(`${e.object.reason}: ${e.object.message}`);
      });
      inform(store, 'pods', (e) => {
        if (e.type === 'MODIFIED' && e.object.spec.nodeName) resolve(e.object);
      });
    });
    try {
      store.create('pods', pod('retried'));
      const pod1 = await bound;
      expect(seen[0]).toBe(
        "FailedScheduling: the simulated node cannot publish the pod's ports: cannot hold host port 20001 on 127.0.0.1: bind EMFILE 127.0.0.1:20001",
      );
      expect(seen).toContain(`Scheduled: Successfully assigned default/retried to ${pod1.spec.nodeName}`);
      expect(pod1.spec.containers[0].ports[0].hostPort).toBe(ports.of('uid-retried').get(8080));
    } finally {
      scheduler.stop();
      ports.forgetAll();
    }
  });
});
