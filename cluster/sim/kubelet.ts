// The process kubelet: runs each pod's containers as local processes, reports their status in the
// kubelet's order, and terminates them by the real kubelet's rules (kill.ts).
import { randomBytes } from 'node:crypto';
import { Faults } from './faults.ts';
import { killContainer } from './kill.ts';
import { startReadinessProber } from './prober.ts';
import { memoryBytes, OomKiller } from './memory.ts';
import { Pleg, REAL_NODE_TIMING, type KubeletTiming } from './pleg.ts';
import { freeHostPort, NODE_IP } from './ports.ts';
import { ContainerProcess, imageRepository, resolvePort, type ContainerPort, type ImageEntry, type ImageMap } from './runtime.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, wallNow } from './time.ts';
import type { GroundTruth } from './truth.ts';

export const NODE_NAME = 'termlab-sim-node';

interface PodWorker {
  uid: string;
  namespace: string;
  name: string;
  /** containerPort -> the host port on NODE_IP it is published at. */
  hostPorts: Map<number, number>;
  containers: Map<string, { process: ContainerProcess; image: ImageEntry; env: Record<string, string>; spec: any; oomKilled: boolean }>;
  stopProbers: (() => void)[];
  deadline?: NodeJS.Timeout;
  terminating: Promise<void> | null;
  /** A DELETE or the deadline has been seen; the kill waits for the pod worker's relists. */
  killScheduled: boolean;
  finished: boolean;
  /** The status manager has issued its own delete (grace 0): only then may the object go. */
  finalDeleteIssued: boolean;
}

export class Kubelet {
  private readonly workers = new Map<string, PodWorker>();
  private eventCounter = 0;

  private readonly store: Store;
  private readonly images: ImageMap;
  private readonly truth: GroundTruth;
  private readonly faults: Faults;

  private readonly pleg: Pleg;
  private readonly oomKiller = new OomKiller();

  constructor(store: Store, images: ImageMap, truth: GroundTruth, faults: Faults, timing: KubeletTiming = REAL_NODE_TIMING) {
    this.pleg = new Pleg(timing);
    this.store = store;
    this.images = images;
    this.truth = truth;
    this.faults = faults;
  }

  recordEvent(pod: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    const now = apiTime();
    this.store.create('events', {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: `${pod.metadata.name}.${(++this.eventCounter).toString(16).padStart(8, '0')}${randomBytes(2).toString('hex')}`, namespace: pod.metadata.namespace, uid: crypto.randomUUID(), resourceVersion: '', creationTimestamp: now },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, ...(fieldPath ? { fieldPath } : {}) },
      reason, message, type, count: 1, firstTimestamp: now, lastTimestamp: now,
      source: { component: 'kubelet', host: NODE_NAME }, reportingComponent: 'kubelet', reportingInstance: NODE_NAME,
    });
  }

  /** Reads the pod afresh and writes a status change; a pod already gone is left alone. */
  private mutate(worker: PodWorker, change: (pod: KubeObject) => void): KubeObject | undefined {
    const pod = this.store.get('pods', worker.namespace, worker.name);
    if (!pod || pod.metadata.uid !== worker.uid) return undefined;
    change(pod);
    return this.store.update('pods', pod);
  }

  podAdded(created: KubeObject): void {
    void this.schedule(created).catch((error: Error) => {
      this.recordEvent(created, 'Warning', 'FailedScheduling', `the simulated node cannot publish the pod's ports: ${error.message}`);
    });
  }

  /** Binds the pod to the node with every TCP container port published at a free host port. */
  private async schedule(created: KubeObject): Promise<void> {
    const hostPorts = new Map<number, number>();
    for (const port of podPorts(created)) {
      hostPorts.set(port.containerPort, port.hostPort ?? await freeHostPort());
    }
    // A port the program listens on without declaring it (Kubernetes does not require it) is published too.
    for (const spec of created.spec.containers as any[]) {
      const listening = this.listenPort(spec);
      if (listening !== undefined && !hostPorts.has(listening)) hostPorts.set(listening, await freeHostPort());
    }
    const pod = this.store.get('pods', created.metadata.namespace, created.metadata.name);
    if (!pod || pod.metadata.uid !== created.metadata.uid || pod.metadata.deletionTimestamp) return;
    pod.spec.nodeName = NODE_NAME;
    for (const port of podPorts(pod)) port.hostPort = hostPorts.get(port.containerPort);
    pod.status = { ...pod.status, phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: apiTime() }], qosClass: 'BestEffort' };
    const scheduled = this.store.update('pods', pod);
    this.recordEvent(scheduled, 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${NODE_NAME}`);
    const unknown = (pod.spec.containers as any[]).filter((c) => !this.images[imageRepository(c.image)]);
    if (unknown.length) return this.imageNotFound(scheduled, unknown);
    this.startPod(scheduled, hostPorts);
  }

  private imageNotFound(pod: KubeObject, unknown: any[]): void {
    for (const c of unknown) {
      this.recordEvent(pod, 'Warning', 'Failed', `Failed to pull image "${c.image}": the simulated cluster has no program for this image (known: ${Object.keys(this.images).join(', ')})`, `spec.containers{${c.name}}`);
      this.recordEvent(pod, 'Warning', 'Failed', 'Error: ErrImagePull', `spec.containers{${c.name}}`);
    }
    pod.status.containerStatuses = (pod.spec.containers as any[]).map((c) => ({
      name: c.name, image: c.image, imageID: '', ready: false, restartCount: 0, started: false,
      state: { waiting: unknown.some((u) => u.name === c.name)
        ? { reason: 'ErrImagePull', message: `image "${c.image}" is not known to the simulated cluster` }
        : { reason: 'ContainerCreating' } },
    }));
    this.store.update('pods', pod);
  }

  private startPod(pod: KubeObject, hostPorts: Map<number, number>): void {
    const worker: PodWorker = {
      uid: pod.metadata.uid, namespace: pod.metadata.namespace!, name: pod.metadata.name,
      hostPorts, containers: new Map(), stopProbers: [], terminating: null, killScheduled: false, finished: false, finalDeleteIssued: false,
    };
    this.workers.set(worker.uid, worker);
    const startedAt = apiTime();
    for (const spec of pod.spec.containers as any[]) {
      const image = this.images[imageRepository(spec.image)]!;
      const env = this.containerEnv(pod, worker, spec, image);
      const argv = spec.command?.length
        ? [...(image.paths[spec.command[0]] ?? [spec.command[0]]), ...spec.command.slice(1), ...(spec.args ?? [])]
        : [...image.entrypoint, ...(spec.args ?? [])];
      const process = new ContainerProcess(argv, env);
      const container = { process, image, env, spec, oomKilled: false };
      worker.containers.set(spec.name, container);
      const limitBytes = memoryBytes(spec.resources?.limits?.memory);
      const pid = process.pid;
      if (limitBytes !== undefined && pid !== undefined) {
        this.oomKiller.watch({ pid, limitBytes, kill: () => { container.oomKilled = true; process.signal('SIGKILL'); } });
        void process.exited.then(() => this.oomKiller.forget(pid));
      }
      if (spec === pod.spec.containers[0] && (pod.spec.dnsPolicy ?? 'ClusterFirst') === 'ClusterFirst') {
        // The sim has no cluster DNS, like the project's real node: dns.go GetPodDNS says so.
        this.recordEvent(pod, 'Warning', 'MissingClusterDNS', `pod: "${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`);
      }
      this.recordEvent(pod, 'Normal', 'Pulled', `Container image "${spec.image}" already present on machine`, `spec.containers{${spec.name}}`);
      this.recordEvent(pod, 'Normal', 'Created', `Created container: ${spec.name}`, `spec.containers{${spec.name}}`);
      this.recordEvent(pod, 'Normal', 'Started', `Started container ${spec.name}`, `spec.containers{${spec.name}}`);
      void process.exited.then((exit) => this.containerExited(worker, spec.name, exit.exitCode, exit.wallMs));
    }
    const running = this.mutate(worker, (p) => {
      p.status.phase = 'Running';
      // No pod network: the pod's address is the node's, as for hostNetwork pods.
      p.status.podIP = NODE_IP;
      p.status.podIPs = [{ ip: NODE_IP }];
      p.status.hostIP = NODE_IP;
      p.status.hostIPs = [{ ip: NODE_IP }];
      p.status.startTime = startedAt;
      p.status.conditions = [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: startedAt },
        { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
        { type: 'Ready', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'ContainersReady', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
      ];
      p.status.containerStatuses = (p.spec.containers as any[]).map((c) => ({
        name: c.name, image: c.image, imageID: `sim://${c.image}`, containerID: `sim://${worker.uid}-${c.name}`,
        ready: false, restartCount: 0, started: true, state: { running: { startedAt } },
      }));
    });
    if (!running) return;
    for (const spec of pod.spec.containers as any[]) {
      const setReady = (ready: boolean) => this.setContainerReady(worker, spec.name, ready);
      if (spec.readinessProbe?.httpGet) {
        const target = this.portTarget(worker.uid, resolvePort(spec.readinessProbe.httpGet.port, spec.ports ?? []));
        worker.stopProbers.push(startReadinessProber({
          target, probe: spec.readinessProbe, onChange: setReady,
          onFailure: (output) => this.recordEvent(pod, 'Warning', 'Unhealthy', `Readiness probe failed: ${output}`, `spec.containers{${spec.name}}`),
        }));
      } else {
        setReady(true);
      }
    }
    const deadline = pod.spec.activeDeadlineSeconds;
    if (typeof deadline === 'number') {
      worker.deadline = setTimeout(() => void this.deadlineExceeded(worker), deadline * 1000);
    }
  }

  private containerEnv(pod: KubeObject, worker: PodWorker, spec: any, image: ImageEntry): Record<string, string> {
    const fields: Record<string, string> = {
      'metadata.name': pod.metadata.name, 'metadata.namespace': pod.metadata.namespace!, 'metadata.uid': pod.metadata.uid,
      'status.podIP': NODE_IP, 'status.hostIP': NODE_IP, 'spec.nodeName': NODE_NAME,
    };
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', HOSTNAME: pod.metadata.name, ...image.env };
    for (const e of (spec.env ?? []) as any[]) {
      if (e.value !== undefined) env[e.name] = String(e.value);
      else if (e.valueFrom?.fieldRef) env[e.name] = fields[e.valueFrom.fieldRef.fieldPath] ?? '';
    }
    // No network namespace: the program listens on the node's address at its published port.
    env.HOST = NODE_IP;
    const listening = this.listenPort(spec);
    if (image.portEnv && listening !== undefined) env[image.portEnv] = String(worker.hostPorts.get(listening));
    return env;
  }

  /** The container port the program serves: its port variable as the pod or the image sets it. */
  private listenPort(spec: any): number | undefined {
    const image = this.images[imageRepository(spec.image)];
    if (!image?.portEnv) return undefined;
    const fromPod = (spec.env as any[] | undefined)?.find((e) => e.name === image.portEnv && e.value !== undefined)?.value;
    const port = Number(fromPod ?? image.env[image.portEnv]);
    return Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
  }

  private setContainerReady(worker: PodWorker, name: string, ready: boolean): void {
    if (worker.finished) return;
    this.mutate(worker, (p) => {
      const status = (p.status.containerStatuses as any[]).find((c) => c.name === name);
      if (!status || status.state.terminated) return;
      status.ready = ready;
      const allReady = (p.status.containerStatuses as any[]).every((c) => c.ready);
      for (const condition of p.status.conditions as any[]) {
        if (condition.type === 'Ready' || condition.type === 'ContainersReady') {
          condition.status = allReady ? 'True' : 'False';
          condition.lastTransitionTime = apiTime();
          if (allReady) delete condition.reason; else condition.reason = 'ContainersNotReady';
        }
      }
    });
  }

  private async containerExited(worker: PodWorker, name: string, exitCode: number, exitedAt: number): Promise<void> {
    const record = this.truth.for({ metadata: { uid: worker.uid, name: worker.name, namespace: worker.namespace } });
    record.exitedAt = exitedAt;
    record.exitCode = exitCode;
    // An exit during the kill sequence is read straight from the runtime once StopContainer returns
    // (SyncTerminatingPod: GetPodStatus, then SetPodStatus); any other exit waits for the PLEG's next relist.
    if (!worker.terminating) await this.pleg.newerThan(exitedAt);
    record.exitSeenAt = wallNow();
    const allExited = [...worker.containers.values()].every((c) => c.process.hasExited);
    if (allExited) {
      worker.finished = true;
      for (const stop of worker.stopProbers) stop();
      clearTimeout(worker.deadline);
    }
    // Ready false, the container terminated and, once all have, the phase: one status write.
    const updated = this.mutate(worker, (p) => {
      const status = (p.status.containerStatuses as any[]).find((c) => c.name === name);
      if (status) {
        status.ready = false;
        status.started = false;
        status.state = { terminated: {
          exitCode, reason: worker.containers.get(name)?.oomKilled ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error',
          startedAt: status.state.running?.startedAt ?? p.status.startTime, finishedAt: apiTime(), containerID: status.containerID,
        } };
      }
      for (const condition of p.status.conditions as any[]) {
        if (condition.type === 'Ready' || condition.type === 'ContainersReady') {
          condition.status = 'False'; condition.reason = 'PodCompleted'; condition.lastTransitionTime = apiTime();
        }
      }
      if (allExited && p.status.reason !== 'DeadlineExceeded') {
        p.status.phase = (p.status.containerStatuses as any[]).every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
      } else if (allExited) {
        p.status.phase = 'Failed';
      }
    });
    if (!allExited || !updated) return;
    // SyncTerminatedPod waits for a relist of its own before the status manager may delete the object.
    await this.pleg.syncs(1);
    worker.finalDeleteIssued = true;
    const latest = this.store.get('pods', worker.namespace, worker.name);
    if (latest?.metadata.uid === worker.uid) this.finishDeletion(latest);
  }

  /** status_manager: once the containers are gone the kubelet deletes the object with grace 0. */
  finishDeletion(pod: KubeObject): void {
    const worker = this.workers.get(pod.metadata.uid);
    // Removing the last finalizer does not delete a pod the kubelet has not finished with yet.
    if (!pod.metadata.deletionTimestamp || (worker && !worker.finalDeleteIssued)) return;
    if (pod.metadata.finalizers?.length) {
      if (pod.metadata.deletionGracePeriodSeconds !== 0) {
        pod.metadata.deletionGracePeriodSeconds = 0;
        this.store.update('pods', pod);
      }
      return;
    }
    if (this.store.get('pods', pod.metadata.namespace, pod.metadata.name)?.metadata.uid === pod.metadata.uid) this.store.remove('pods', pod);
    this.workers.delete(pod.metadata.uid);
  }

  /** pod_workers.go calculateEffectiveGracePeriod: the deletion's grace, else the spec's; never below 1 s. */
  static calculateEffectiveGracePeriod(pod: KubeObject): number {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    return Math.max(1, grace);
  }

  /** The API server set deletionTimestamp: kill every container of the pod. */
  podDeleting(pod: KubeObject): void {
    const worker = this.workers.get(pod.metadata.uid);
    const record = this.truth.for(pod);
    record.deleteReceivedAt ??= wallNow();
    if (!worker || worker.finished) return this.finishDeletion(pod);
    if (worker.killScheduled) return;
    worker.killScheduled = true;
    // The pod worker's syncs each wait for a relist (pleg.ts); the grace is read when the kill begins,
    // so a second DELETE that shortened it meanwhile counts.
    void this.pleg.syncs(this.pleg.relistsBeforeKill).then(() => {
      const current = this.store.get('pods', worker.namespace, worker.name);
      const latest = current?.metadata.uid === worker.uid ? current : pod;
      this.killPod(worker, latest, Kubelet.calculateEffectiveGracePeriod(latest));
    });
  }

  private killPod(worker: PodWorker, pod: KubeObject, gracePeriod: number): void {
    if (worker.terminating || worker.finished || [...worker.containers.values()].every((c) => c.process.hasExited)) return;
    const truth = this.truth.for(pod);
    truth.gracePeriodSeconds = gracePeriod;
    const key = Faults.key(worker.namespace, worker.name);
    worker.terminating = Promise.all([...worker.containers].map(([name, c]) => killContainer({
      containerName: name, container: c.process, lifecycle: c.spec.lifecycle,
      portTarget: (port) => this.portTarget(worker.uid, resolvePort(port, c.spec.ports ?? [])), env: c.env, image: c.image, truth, ignoreSigterm: this.faults.ignoreSigterm.has(key),
      recordEvent: (type, reason, message) => this.recordEvent(pod, type, reason, message, `spec.containers{${name}}`),
    }, gracePeriod))).then(() => undefined);
  }

  /** The sync loop's 1 s tick asks the active-deadline handler; the sync that fails the pod and the terminating one each wait for a relist. */
  private async deadlineExceeded(worker: PodWorker): Promise<void> {
    await this.pleg.syncs(1);
    if (worker.finished || worker.killScheduled) return;
    worker.killScheduled = true;
    // generateAPIPodStatus: past its deadline the pod is Failed at once, and a terminal pod is no
    // longer probed (prober/worker.go), so a draining server gives no Unhealthy events.
    const pod = this.mutate(worker, (p) => {
      p.status.phase = 'Failed';
      p.status.reason = 'DeadlineExceeded';
      p.status.message = 'Pod was active on the node longer than the specified deadline';
    });
    if (!pod) return;
    for (const stop of worker.stopProbers) stop();
    this.recordEvent(pod, 'Normal', 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline');
    await this.pleg.syncs(1);
    this.killPod(worker, this.store.get('pods', worker.namespace, worker.name) ?? pod, Kubelet.calculateEffectiveGracePeriod(pod));
  }

  containerLog(uid: string, container?: string): ContainerProcess | undefined {
    const worker = this.workers.get(uid);
    if (!worker) return undefined;
    return (container ? worker.containers.get(container) : worker.containers.values().next().value)?.process;
  }

  /** True once the pod's containers have all ended (or the kubelet never had it). */
  isDone(uid: string): boolean {
    const worker = this.workers.get(uid);
    return !worker || worker.finished;
  }

  /** Where a pod's container port is reached on this machine: probes, hooks and port-forwards all go here. */
  portTarget(uid: string, containerPort: number): { host: string; port: number } | undefined {
    const worker = this.workers.get(uid);
    const port = worker?.hostPorts.get(containerPort);
    return worker && !worker.finished && port !== undefined ? { host: NODE_IP, port } : undefined;
  }

  /** A running container, for exec: its process, image and environment; undefined once it has exited. */
  runningContainer(uid: string, name: string): { process: ContainerProcess; image: ImageEntry; env: Record<string, string> } | undefined {
    const container = this.workers.get(uid)?.containers.get(name);
    return container && !container.process.hasExited ? container : undefined;
  }

  /** Stops every process this kubelet started, at once. */
  async shutdown(): Promise<void> {
    this.pleg.stop();
    this.oomKiller.stop();
    const exits: Promise<unknown>[] = [];
    for (const worker of this.workers.values()) {
      clearTimeout(worker.deadline);
      for (const stop of worker.stopProbers) stop();
      for (const c of worker.containers.values()) { c.process.signal('SIGKILL'); exits.push(c.process.exited); }
    }
    await Promise.all(exits);
  }
}

function podPorts(pod: KubeObject): (ContainerPort & { hostPort?: number; protocol?: string })[] {
  return (pod.spec.containers as any[]).flatMap((c) => (c.ports ?? []) as any[]).filter((p) => (p.protocol ?? 'TCP') === 'TCP' && Number.isInteger(p.containerPort));
}
