// The scheduler (kube-scheduler's default-scheduler, reduced to the sim's one node): binds each new
// pod to the node. The sim has no pod network, so binding also publishes every TCP container port,
// and the port the program listens on undeclared, at a free host port (ports.ts); the kubelet reads
// that table when it starts the pod.
import { inform } from './controller-queue.ts';
import { recordEvent } from './events.ts';
import type { ContainerSpec, PodCondition, PodPort, PodSpec } from './pod-types.ts';
import { NODE_NAME, type NodePorts } from './ports.ts';
import { type ImageMap, listenPort } from './runtime.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime } from './time.ts';

const COMPONENT = 'default-scheduler';
/** kube-scheduler's podInitialBackoffSeconds and podMaxBackoffSeconds: a pod whose binding failed waits, twice as long each time, and is tried again. */
const BACKOFF_INITIAL_MS = 1000;
const BACKOFF_MAX_MS = 10_000;

export class Scheduler {
  private readonly store: Store;
  private readonly images: ImageMap;
  private readonly ports: NodePorts;
  private readonly unsubscribe: () => void;
  private readonly retries = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(store: Store, images: ImageMap, ports: NodePorts) {
    this.store = store;
    this.images = images;
    this.ports = ports;
    // The POST answers with the Pending pod; the binding follows as a watch event.
    this.unsubscribe = inform(
      store,
      'pods',
      (e) => {
        if (e.type === 'ADDED' && !(e.object.spec as PodSpec).nodeName) setImmediate(() => this.schedule(e.object));
      },
      { delayable: false },
    );
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }

  private schedule(created: KubeObject, failures = 0): void {
    void this.bind(created).catch((error: Error) => {
      recordEvent(
        this.store,
        created,
        COMPONENT,
        'Warning',
        'FailedScheduling',
        `the simulated node cannot publish the pod's ports: ${error.message}`,
      );
      if (this.stopped) return;
      const timer = setTimeout(
        () => {
          this.retries.delete(timer);
          const pod = this.store.get('pods', created.metadata.namespace, created.metadata.name);
          // The same pod, still there and still unbound (the backoff queue drops a pod deleted meanwhile).
          if (
            pod &&
            pod.metadata.uid === created.metadata.uid &&
            !(pod.spec as PodSpec).nodeName &&
            !pod.metadata.deletionTimestamp
          )
            this.schedule(pod, failures + 1);
        },
        Math.min(BACKOFF_INITIAL_MS * 2 ** failures, BACKOFF_MAX_MS),
      );
      this.retries.add(timer);
    });
  }

  /** Binds the pod to the node with every TCP container port published at a free host port. */
  private async bind(created: KubeObject): Promise<void> {
    const hostPorts = new Map<number, number>();
    const reserved: number[] = [];
    const reserve = async () => {
      const port = await this.ports.reserve();
      reserved.push(port);
      return port;
    };
    try {
      for (const port of podPorts(created.spec)) {
        hostPorts.set(port.containerPort, port.hostPort ?? (await reserve()));
      }
      // A port the program listens on without declaring it (Kubernetes does not require it) is published too.
      for (const spec of allContainers(created.spec as PodSpec)) {
        const listening = listenPort(spec, this.images);
        if (listening !== undefined && !hostPorts.has(listening)) hostPorts.set(listening, await reserve());
      }
    } catch (error) {
      this.ports.release(reserved);
      throw error;
    }
    const pod = this.store.get('pods', created.metadata.namespace, created.metadata.name);
    if (!pod || pod.metadata.uid !== created.metadata.uid || pod.metadata.deletionTimestamp)
      return this.ports.release(reserved);
    const spec: PodSpec = pod.spec;
    spec.nodeName = NODE_NAME;
    for (const port of podPorts(spec)) port.hostPort = hostPorts.get(port.containerPort);
    const scheduled: PodCondition = { type: 'PodScheduled', status: 'True', lastTransitionTime: apiTime() };
    pod.status = { ...pod.status, phase: 'Pending', conditions: [scheduled], qosClass: 'BestEffort' };
    this.ports.publish(pod.metadata.uid, hostPorts, reserved);
    const bound = this.store.update('pods', pod);
    recordEvent(
      this.store,
      bound,
      COMPONENT,
      'Normal',
      'Scheduled',
      `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${NODE_NAME}`,
    );
  }
}

/** A sidecar's ports are the pod's too: its containers share one network. */
const allContainers = (spec: PodSpec): ContainerSpec[] => [...(spec.initContainers ?? []), ...spec.containers];

function podPorts(spec: PodSpec): PodPort[] {
  return allContainers(spec)
    .flatMap((c: ContainerSpec) => c.ports ?? [])
    .filter((p) => (p.protocol ?? 'TCP') === 'TCP' && Number.isInteger(p.containerPort));
}
