// The kubelet's server (pkg/kubelet/server): what the API server and the node's proxy reach through
// the kubelet for a pod: a container's log (containerLogs), a running container (exec), and where
// its ports are published (portForward, probes, hooks, Services).
import type { RuntimePod } from './kuberuntime.ts';
import { NODE_IP } from './ports.ts';
import type { ContainerProcess, ImageEntry } from './runtime.ts';

/** A pod the kubelet runs; `done` once its containers have all ended. */
export interface ServedPod { pod: RuntimePod; done: boolean }

/** Where a pod's container port is reached on this machine, while its containers run. */
export function portTarget(served: ServedPod | undefined, containerPort: number): { host: string; port: number } | undefined {
  const port = served?.pod.hostPorts.get(containerPort);
  return served && !served.done && port !== undefined ? { host: NODE_IP, port } : undefined;
}

export class KubeletServer {
  private readonly lookup: (uid: string) => ServedPod | undefined;
  /** The log reader's look-again period for a followed log (versions.ts logReaderCheckMs). */
  readonly logReaderCheckMs: number;

  constructor(lookup: (uid: string) => ServedPod | undefined, logReaderCheckMs = 0) {
    this.lookup = lookup;
    this.logReaderCheckMs = logReaderCheckMs;
  }

  containerLog(uid: string, container?: string): ContainerProcess | undefined {
    const containers = this.lookup(uid)?.pod.containers;
    return (container ? containers?.get(container) : containers?.values().next().value)?.process;
  }

  /** True once the pod's containers have all ended (or the kubelet never had it). */
  isDone(uid: string): boolean {
    return this.lookup(uid)?.done ?? true;
  }

  portTarget(uid: string, containerPort: number): { host: string; port: number } | undefined {
    return portTarget(this.lookup(uid), containerPort);
  }

  /** A running container, for exec: its process, image and environment; undefined once it has exited. */
  runningContainer(uid: string, name: string): { process: ContainerProcess; image: ImageEntry; env: Record<string, string> } | undefined {
    const container = this.lookup(uid)?.pod.containers.get(name);
    return container && !container.process.hasExited ? container : undefined;
  }
}
