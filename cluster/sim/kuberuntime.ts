// The kubelet's container runtime manager (pkg/kubelet/kuberuntime) for the sim's runtime: SyncPod's
// sandbox and containers, startContainer with the environment kubelet_pods.go gives a container, and
// KillPod. A container is a local process running the image's program; the runtime's own time (the
// real node's containerd and CNI) is slept where it is spent.
import { kubeletEvent } from './events.ts';
import { killContainer } from './kill.ts';
import { memoryBytes, OomKiller } from './memory.ts';
import type { RuntimeTiming } from './pleg.ts';
import type { ContainerSpec, PodRef, PodSpec } from './pod-types.ts';
import { NODE_IP, NODE_NAME } from './ports.ts';
import { ContainerProcess, type ImageEntry, type ImageMap, imageFor, listenPort, resolvePort } from './runtime.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, sleepAtLeast, wallNow } from './time.ts';
import { hasRestartableInitContainer, TerminationOrdering } from './termination-order.ts';
import type { ContainerTruth, TruthRecord } from './truth.ts';
import { DEFAULT_SIM_MINOR, type SimMinor } from './versions.ts';
import { FeatureGates } from './feature-gates.ts';

export interface ContainerRecord {
  process: ContainerProcess;
  image: ImageEntry;
  env: Record<string, string>;
  spec: ContainerSpec;
  /** When the memory limit's SIGKILL was sent (wall ms), as containerd logs the cgroup's OOM event; unset if it never was. */
  oomKilledAt?: number;
  /** Its state.running.startedAt. */
  startedAt: string;
  exitCode?: number;
  /** The PLEG (or killPod's return) has seen the exit; the next status carries it. */
  exitSeen: boolean;
  /** Removed from the runtime (cleanUpContainersInPod, the container GC): its log is gone. */
  removed?: boolean;
  /** The runtime's stop signal, fixed at CreateContainer (containerStopSignal). */
  stopSignal: string;
}

/** The pod as the runtime runs it: where its ports are published and its containers once started. */
export interface RuntimePod extends PodRef {
  /** containerPort -> the host port on NODE_IP it is published at. */
  hostPorts: ReadonlyMap<number, number>;
  containers: Map<string, ContainerRecord>;
}

export interface KillOptions {
  /** The pod's record: it follows the first main container's kill (spec.containers[0]). */
  truth: TruthRecord;
  /** Each container's own record. */
  containerTruth(name: string): ContainerTruth;
  ignoreSigterm: boolean;
  /** The kubelet's portTarget for a container port of this pod. */
  portTarget(containerPort: number): { host: string; port: number } | undefined;
  /** Resolves once the kubelet runs (at once unless it is stopped): a CRI call's return is read then. */
  kubeletRunning(): Promise<void>;
}

export class RuntimeManager {
  private readonly store: Store;
  private readonly images: ImageMap;
  private readonly timing: RuntimeTiming;
  private readonly minor: SimMinor;
  private readonly gates: FeatureGates;
  private readonly oomKiller = new OomKiller();
  private stopped = false;

  constructor(
    store: Store,
    images: ImageMap,
    timing: RuntimeTiming,
    minor: SimMinor,
    gates: FeatureGates = new FeatureGates(DEFAULT_SIM_MINOR),
  ) {
    this.store = store;
    this.images = images;
    this.timing = timing;
    this.minor = minor;
    this.gates = gates;
  }

  /** EnsureImageExists for each container: the containers whose image the node has no program for, each with its events. */
  missingImages(pod: KubeObject): Set<string> {
    const missing = new Set<string>();
    const spec = pod.spec as PodSpec;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      if (imageFor(this.images, c.image)) continue;
      missing.add(c.name);
      kubeletEvent(
        this.store,
        pod,
        'Warning',
        'Failed',
        `Failed to pull image "${c.image}": the simulated cluster has no program for this image (known: ${Object.keys(this.images).join(', ')})`,
        c.name,
      );
      kubeletEvent(this.store, pod, 'Warning', 'Failed', 'Error: ErrImagePull', c.name);
    }
    return missing;
  }

  /** SyncPod's first step: RunPodSandbox. */
  async runPodSandbox(pod: KubeObject, target: RuntimePod): Promise<void> {
    if (((pod.spec as PodSpec).dnsPolicy ?? 'ClusterFirst') === 'ClusterFirst') {
      // The sandbox's DNS: the sim has no cluster DNS, like the project's real node, and dns.go GetPodDNS says so.
      kubeletEvent(
        this.store,
        pod,
        'Warning',
        'MissingClusterDNS',
        `pod: "${target.name}_${target.namespace}(${target.uid})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`,
      );
    }
    await sleepAtLeast(this.timing.runPodSandboxMs);
  }

  /** SyncPod for a pod without init containers: RunPodSandbox, then its containers. */
  async startPod(pod: KubeObject, target: RuntimePod, started: (container: ContainerRecord) => void): Promise<void> {
    await this.runPodSandbox(pod, target);
    await this.startContainers(pod, target, (pod.spec as PodSpec).containers, started);
  }

  /** SyncPod's starts: each container in order, its image (present), CreateContainer and StartContainer. */
  async startContainers(
    pod: KubeObject,
    target: RuntimePod,
    specs: readonly ContainerSpec[],
    started: (container: ContainerRecord) => void,
  ): Promise<void> {
    for (const spec of specs) {
      kubeletEvent(
        this.store,
        pod,
        'Normal',
        'Pulled',
        `Container image "${spec.image}" already present on machine`,
        spec.name,
      );
      await sleepAtLeast(this.timing.startContainerMs);
      // A sync under way when the kubelet stops: no process outlives the runtime that would have to kill it.
      if (this.stopped)
        throw new Error(
          `the runtime stopped before container ${spec.name} of ${target.namespace}/${target.name} started`,
        );
      const container = this.startContainer(target, spec, imageFor(this.images, spec.image)!);
      target.containers.set(spec.name, container);
      started(container);
      kubeletEvent(this.store, pod, 'Normal', 'Created', this.minor.createdMessage(spec.name), spec.name);
      kubeletEvent(this.store, pod, 'Normal', 'Started', this.minor.startedMessage(spec.name), spec.name);
    }
  }

  /**
   * KillPod, killContainersWithSyncResult:
   * 1. If the pod has a restartable init container: newTerminationOrdering(pod, the running containers' names).
   * 2. killContainer (kill.ts) for every running container at once, each in its own goroutine, with the ordering.
   * 3. Wait for all; then StopPodSandbox and the status read.
   */
  async killPod(pod: KubeObject, target: RuntimePod, gracePeriod: number, options: KillOptions): Promise<void> {
    const spec = pod.spec as PodSpec;
    const running = [...target.containers].filter(([, c]) => !c.process.hasExited);
    const ordering = hasRestartableInitContainer(spec)
      ? new TerminationOrdering(
          spec,
          running.map(([name]) => name),
        )
      : undefined;
    const first = spec.containers[0]?.name;
    await Promise.all(
      running.map(([name, c]) =>
        killContainer(
          {
            containerName: name,
            container: c.process,
            lifecycle: c.spec.lifecycle,
            env: c.env,
            image: c.image,
            ordering,
            truth: options.containerTruth(name),
            podTruth: name === first ? options.truth : undefined,
            stopSignal: c.stopSignal,
            ignoreSigterm: options.ignoreSigterm,
            kubeletRunning: options.kubeletRunning,
            portTarget: (port) => options.portTarget(resolvePort(port, c.spec.ports ?? [])),
            recordEvent: (type, reason, message) => kubeletEvent(this.store, pod, type, reason, message, name),
          },
          gracePeriod,
        ),
      ),
    );
    // StopContainer's SIGKILL is containerd's own timer, on time while the kubelet is stopped; its return is read when the kubelet runs.
    await options.kubeletRunning();
    await sleepAtLeast(this.timing.killPodReturnMs);
  }

  stop(): void {
    this.stopped = true;
    this.oomKiller.stop();
  }

  private startContainer(pod: RuntimePod, spec: ContainerSpec, image: ImageEntry): ContainerRecord {
    const env = this.containerEnv(pod, spec, image);
    const argv = spec.command?.length
      ? [...(image.paths[spec.command[0]!] ?? [spec.command[0]!]), ...spec.command.slice(1), ...(spec.args ?? [])]
      : [...image.entrypoint, ...(spec.args ?? [])];
    const process = new ContainerProcess(argv, env);
    const container: ContainerRecord = {
      process,
      image,
      env,
      spec,
      startedAt: apiTime(),
      exitSeen: false,
      stopSignal: containerStopSignal(spec, image, this.gates),
    };
    const limitBytes = memoryBytes(spec.resources?.limits?.memory);
    const pid = process.pid;
    if (limitBytes !== undefined && pid !== undefined) {
      this.oomKiller.watch({
        pid,
        limitBytes,
        kill: () => {
          container.oomKilledAt = wallNow();
          process.signal('SIGKILL');
        },
      });
      void process.exited.then(() => this.oomKiller.forget(pid));
    }
    return container;
  }

  /** makeEnvironmentVariables: the image's, then the spec's values and field references. */
  private containerEnv(pod: RuntimePod, spec: ContainerSpec, image: ImageEntry): Record<string, string> {
    const fields = new Map([
      ['metadata.name', pod.name],
      ['metadata.namespace', pod.namespace],
      ['metadata.uid', pod.uid],
      ['status.podIP', NODE_IP],
      ['status.hostIP', NODE_IP],
      ['spec.nodeName', NODE_NAME],
    ]);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: '/tmp',
      HOSTNAME: pod.name,
      ...image.env,
    };
    for (const e of spec.env ?? []) {
      if (e.value !== undefined) env[e.name] = String(e.value);
      else if (e.valueFrom?.fieldRef) env[e.name] = fields.get(e.valueFrom.fieldRef.fieldPath) ?? '';
    }
    // No network namespace: the program listens on the node's address at its published port.
    env.HOST = NODE_IP;
    const listening = listenPort(spec, this.images);
    if (image.portEnv && listening !== undefined) env[image.portEnv] = String(pod.hostPorts.get(listening));
    if (image.hostPortsEnv)
      env[image.hostPortsEnv] = [...pod.hostPorts].map(([container, host]) => `${container}=${host}`).join(',');
    for (const name of image.localPortEnvs ?? []) {
      const published = env[name] === undefined ? undefined : pod.hostPorts.get(Number(env[name]));
      if (published !== undefined) env[name] = String(published);
    }
    return env;
  }
}

/**
 * The stop signal the runtime keeps for a container at CreateContainer. The kubelet puts lifecycle.stopSignal in
 * the CRI config only with ContainerStopSignals on (kuberuntime/helpers.go getContainerConfigStopSignal, in
 * generateContainerConfig); containerd takes the config's, else the image's STOPSIGNAL, else SIGTERM
 * (internal/cri/server/container_create.go, container_stop.go, v2.4.2).
 */
export function containerStopSignal(spec: ContainerSpec, image: ImageEntry, gates: FeatureGates): string {
  const fromSpec = gates.enabled('ContainerStopSignals') ? spec.lifecycle?.stopSignal : undefined;
  return fromSpec ?? image.stopSignal ?? 'SIGTERM';
}
