// The kubelet's server (pkg/kubelet/server): what the API server and the node's proxy reach through
// the kubelet for a pod: a container's log (containerLogs), a running container (exec), and where
// its ports are published (portForward, probes, hooks, Services). The kubelet serves logs itself and
// proxies port-forward streams to the runtime (server.go getPortForward: UpgradeAwareHandler), so a
// stopped kubelet holds both until it runs again.
import type { Socket } from 'node:net';
import { KubeletPause } from './faults.ts';
import type { RuntimePod } from './kuberuntime.ts';
import { NODE_IP } from './ports.ts';
import type { ContainerProcess, ImageEntry } from './runtime.ts';

/** A pod the kubelet runs; `done` once its containers have all ended. */
export interface ServedPod {
  pod: RuntimePod;
  done: boolean;
}

/**
 * Where a pod's container port is reached on this machine, while its containers run. Once every process told
 * to listen on it (its image's port variable) has exited, nothing is reached there, though the PLEG has not
 * seen the exit yet: in the pod's own network the port is then closed, while here another program may have
 * bound the host port. A container of the same image that never listened (its command another) is told the
 * port too: the port closes only with the last of them.
 */
export function portTarget(
  served: ServedPod | undefined,
  containerPort: number,
): { host: string; port: number } | undefined {
  const port = served?.pod.hostPorts.get(containerPort);
  if (!served || served.done || port === undefined) return undefined;
  const told = [...served.pod.containers.values()].filter(
    (c) => c.image.portEnv !== undefined && c.env[c.image.portEnv] === String(port),
  );
  if (told.length && told.every((c) => c.process.hasExited)) return undefined;
  return { host: NODE_IP, port };
}

/** A container's log as the kubelet finds it: the process, or only its ID once the runtime removed it. */
export interface ContainerLogSource {
  process: ContainerProcess;
  removed: boolean;
  containerID: string;
}

export class KubeletServer {
  private readonly lookup: (uid: string) => ServedPod | undefined;
  readonly pause: KubeletPause;
  /** The runtime ends of the port-forward streams the kubelet proxies. */
  private readonly streams = new Set<Socket>();
  /** The log reader's look-again period for a followed log (versions.ts logReaderCheckMs). */
  readonly logReaderCheckMs: number;

  constructor(
    lookup: (uid: string) => ServedPod | undefined,
    pause: KubeletPause = new KubeletPause(),
    logReaderCheckMs = 0,
  ) {
    this.lookup = lookup;
    this.pause = pause;
    this.logReaderCheckMs = logReaderCheckMs;
    pause.on('paused', () => {
      for (const s of this.streams) hold(s);
    });
    pause.on('resumed', () => {
      for (const s of this.streams) release(s);
    });
  }

  containerLog(uid: string, container?: string): ContainerLogSource | undefined {
    const pod = this.lookup(uid)?.pod;
    const name = container ?? pod?.containers.keys().next().value;
    const record = name === undefined ? undefined : pod?.containers.get(name);
    return (
      record &&
      pod && { process: record.process, removed: record.removed === true, containerID: `sim://${pod.uid}-${name}` }
    );
  }

  /** A port-forward stream to the pod, opened: it stands still whenever the kubelet is stopped. */
  proxied(socket: Socket): void {
    this.streams.add(socket);
    socket.on('close', () => this.streams.delete(socket));
    if (this.pause.paused) hold(socket);
  }

  /** True once the pod's containers have all ended (or the kubelet never had it). */
  isDone(uid: string): boolean {
    return this.lookup(uid)?.done ?? true;
  }

  portTarget(uid: string, containerPort: number): { host: string; port: number } | undefined {
    return portTarget(this.lookup(uid), containerPort);
  }

  /** A running container, for exec: its process, image and environment; undefined once it has exited. */
  runningContainer(
    uid: string,
    name: string,
  ): { process: ContainerProcess; image: ImageEntry; env: Record<string, string> } | undefined {
    const container = this.lookup(uid)?.pod.containers.get(name);
    return container && !container.process.hasExited ? container : undefined;
  }
}

/** Nothing read from or written to the runtime's end while the kubelet is stopped: the bytes wait in buffers. */
function hold(socket: Socket): void {
  socket.pause();
  socket.cork();
}

function release(socket: Socket): void {
  socket.uncork();
  socket.resume();
}
