// The process kubelet: runs each pod's containers as local processes, reports their status in the
// kubelet's order, and terminates them by the real kubelet's rules (kill.ts).
import { randomBytes } from 'node:crypto';
import { Faults } from './faults.ts';
import { killContainer } from './kill.ts';
import { startReadinessProber, type ReadinessProber } from './prober.ts';
import { memoryBytes, OomKiller } from './memory.ts';
import { Pleg, REAL_NODE_TIMING, type KubeletTiming } from './pleg.ts';
import { SIM_MINORS, DEFAULT_SIM_MINOR, type SimMinor } from './versions.ts';
import { PodWorkerLoop, type WorkType } from './pod-worker.ts';
import { freeHostPort, NODE_IP } from './ports.ts';
import { ContainerProcess, imageRepository, resolvePort, type ContainerPort, type ImageEntry, type ImageMap } from './runtime.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, sleepAtLeast, wallNow } from './time.ts';
import type { GroundTruth } from './truth.ts';

export const NODE_NAME = 'termlab-sim-node';

interface ContainerRecord {
  process: ContainerProcess;
  image: ImageEntry;
  env: Record<string, string>;
  spec: any;
  oomKilled: boolean;
  /** Its state.running.startedAt. */
  startedAt: string;
  exitCode?: number;
  /** The PLEG (or killPod's return) has seen the exit; the next status carries it. */
  exitSeen: boolean;
}

interface PodWorker {
  uid: string;
  namespace: string;
  name: string;
  /** containerPort -> the host port on NODE_IP it is published at. */
  hostPorts: Map<number, number>;
  containers: Map<string, ContainerRecord>;
  loop: PodWorkerLoop;
  probers: ReadinessProber[];
  /** status.startTime plus activeDeadlineSeconds, wall ms. */
  deadlineAt?: number;
  /** An eviction (the active deadline) decided the pod's terminal reason; the phase waits for the containers to stop. */
  evicted?: { reason: string; message: string };
  /** The first sync has created the sandbox and started the containers. */
  started: boolean;
  /** The PLEG has seen the containers start (ContainerStarted), so status shows them running. */
  startSeen: boolean;
  runningPublished: boolean;
  /** killPod in progress: exits are read straight from the runtime when it returns. */
  killing: Promise<void> | null;
  /** Every container has exited and its status is written. */
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
  private readonly timing: KubeletTiming;
  /** The emulated minor's messages and PLEG behaviour (versions.ts). */
  private readonly minor: SimMinor;
  private readonly syncTicker: NodeJS.Timeout;
  private readonly oomKiller = new OomKiller();

  constructor(store: Store, images: ImageMap, truth: GroundTruth, faults: Faults, timing: KubeletTiming = REAL_NODE_TIMING, minor: SimMinor = SIM_MINORS.get(DEFAULT_SIM_MINOR)!) {
    this.pleg = new Pleg(timing);
    this.timing = timing;
    this.minor = minor;
    // syncLoop's syncTicker: pods whose active deadline has passed ask to be synced (active_deadline.go ShouldSync).
    this.syncTicker = setInterval(() => this.syncTick(), timing.syncTickMs);
    this.syncTicker.unref();
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
    // The loop's handler is called only after update(), by which time `worker` is assigned.
    const loop = new PodWorkerLoop(pod.metadata.uid, this.pleg, (work) => this.syncWork(worker, work));
    const worker: PodWorker = {
      uid: pod.metadata.uid, namespace: pod.metadata.namespace!, name: pod.metadata.name, hostPorts, containers: new Map(),
      loop, probers: [], started: false, startSeen: false, runningPublished: false,
      killing: null, finished: false, finalDeleteIssued: false,
    };
    this.workers.set(worker.uid, worker);
    worker.loop.update('sync');
  }

  private syncWork(worker: PodWorker, work: WorkType): Promise<WorkType | undefined> | WorkType | undefined {
    if (work === 'sync') return this.syncPod(worker);
    if (work === 'terminating') return this.syncTerminatingPod(worker);
    this.syncTerminatedPod(worker);
    return undefined;
  }

  /** SyncPod: the first one writes Pending, creates the sandbox and starts the containers; later ones write what the PLEG and the deadline say. */
  private async syncPod(worker: PodWorker): Promise<WorkType | undefined> {
    if (!worker.started) {
      await this.createContainers(worker);
      // The sandbox and the containers are new in the runtime: result.SyncResults is not empty, so 1.36+
      // relist the pod at once (1.37.2 kubelet.go:2321-2326); 1.34 and 1.35 wait for the next relist.
      if (this.minor.onDemandRelist) worker.loop.postSync(() => this.pleg.requestRelist(worker.uid));
      return undefined;
    }
    if (worker.startSeen && !worker.runningPublished) this.publishRunning(worker);
    if (this.publishExits(worker)) return 'terminating';
    if (worker.deadlineAt !== undefined && wallNow() >= worker.deadlineAt) return this.deadlineExceeded(worker);
    return undefined;
  }

  private async createContainers(worker: PodWorker): Promise<void> {
    worker.started = true;
    const startedWall = wallNow();
    const startedAt = apiTime(startedWall);
    const pending = this.mutate(worker, (p) => {
      p.status.startTime = startedAt;
      p.status.hostIP = NODE_IP;
      p.status.hostIPs = [{ ip: NODE_IP }];
      p.status.conditions = [
        { type: 'PodReadyToStartContainers', status: 'False', lastTransitionTime: startedAt },
        { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
        { type: 'Ready', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'ContainersReady', status: 'False', lastTransitionTime: startedAt, reason: 'ContainersNotReady' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
      ];
      p.status.containerStatuses = (p.spec.containers as any[]).map((c) => ({
        name: c.name, image: c.image, imageID: '', ready: false, restartCount: 0, started: false, state: { waiting: { reason: 'ContainerCreating' } },
      }));
    });
    if (!pending) return;
    const deadline = pending.spec.activeDeadlineSeconds;
    // The status manager keeps startTime in whole seconds (status_manager.go normalizeStatus), and
    // active_deadline.go measures from that: the deadline falls up to 1 s before startTime + seconds.
    if (typeof deadline === 'number') worker.deadlineAt = Math.floor(startedWall / 1000) * 1000 + deadline * 1000;
    if ((pending.spec.dnsPolicy ?? 'ClusterFirst') === 'ClusterFirst') {
      // The sim has no cluster DNS, like the project's real node: dns.go GetPodDNS says so.
      this.recordEvent(pending, 'Warning', 'MissingClusterDNS', `pod: "${pending.metadata.name}_${pending.metadata.namespace}(${pending.metadata.uid})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`);
    }
    await sleepAtLeast(this.timing.runtime.runPodSandboxMs);
    for (const spec of pending.spec.containers as any[]) {
      this.recordEvent(pending, 'Normal', 'Pulled', `Container image "${spec.image}" already present on machine`, `spec.containers{${spec.name}}`);
      await sleepAtLeast(this.timing.runtime.startContainerMs);
      this.spawnContainer(worker, pending, spec);
      this.recordEvent(pending, 'Normal', 'Created', this.minor.createdMessage(spec.name), `spec.containers{${spec.name}}`);
      this.recordEvent(pending, 'Normal', 'Started', this.minor.startedMessage(spec.name), `spec.containers{${spec.name}}`);
    }
    for (const spec of pending.spec.containers as any[]) {
      if (!spec.readinessProbe?.httpGet) continue;
      const target = this.portTarget(worker.uid, resolvePort(spec.readinessProbe.httpGet.port, spec.ports ?? []));
      worker.probers.push(startReadinessProber({
        target, probe: spec.readinessProbe,
        onChange: (ready) => this.setContainerReady(worker, spec.name, ready),
        onFailure: (output) => this.recordEvent(pending, 'Warning', 'Unhealthy', `Readiness probe failed: ${output}`, `spec.containers{${spec.name}}`),
      }));
    }
    // GenericPLEG: the next relist (or, 1.36+, the pod's own relist after this sync) sees the containers
    // running and hands the pod worker a ContainerStarted event.
    void this.pleg.newerThan(wallNow(), worker.uid).then(() => {
      worker.startSeen = true;
      worker.loop.update('sync');
    });
  }

  private spawnContainer(worker: PodWorker, pod: KubeObject, spec: any): void {
    const image = this.images[imageRepository(spec.image)]!;
    const env = this.containerEnv(pod, worker, spec, image);
    const argv = spec.command?.length
      ? [...(image.paths[spec.command[0]] ?? [spec.command[0]]), ...spec.command.slice(1), ...(spec.args ?? [])]
      : [...image.entrypoint, ...(spec.args ?? [])];
    const process = new ContainerProcess(argv, env);
    const container: ContainerRecord = { process, image, env, spec, oomKilled: false, startedAt: apiTime(), exitSeen: false };
    worker.containers.set(spec.name, container);
    const limitBytes = memoryBytes(spec.resources?.limits?.memory);
    const pid = process.pid;
    if (limitBytes !== undefined && pid !== undefined) {
      this.oomKiller.watch({ pid, limitBytes, kill: () => { container.oomKilled = true; process.signal('SIGKILL'); } });
      void process.exited.then(() => this.oomKiller.forget(pid));
    }
    void process.exited.then((exit) => this.containerExited(worker, container, exit.exitCode, exit.wallMs));
  }

  /** The sync after ContainerStarted: Running, the containers' start, and the prober's first (manual) run. */
  private publishRunning(worker: PodWorker): void {
    worker.runningPublished = true;
    const running = this.mutate(worker, (p) => {
      const now = apiTime();
      p.status.phase = 'Running';
      // No pod network: the pod's address is the node's, as for hostNetwork pods.
      p.status.podIP = NODE_IP;
      p.status.podIPs = [{ ip: NODE_IP }];
      for (const condition of p.status.conditions as any[]) {
        if (condition.type === 'PodReadyToStartContainers') { condition.status = 'True'; condition.lastTransitionTime = now; }
      }
      p.status.containerStatuses = (p.spec.containers as any[]).map((c) => ({
        name: c.name, image: c.image, imageID: `sim://${c.image}`, containerID: `sim://${worker.uid}-${c.name}`,
        ready: false, restartCount: 0, started: true, state: { running: { startedAt: worker.containers.get(c.name)?.startedAt ?? now } },
      }));
    });
    if (!running) return;
    for (const spec of running.spec.containers as any[]) {
      if (!spec.readinessProbe?.httpGet) this.setContainerReady(worker, spec.name, true);
    }
    for (const prober of worker.probers) prober.containerStarted();
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

  /** status_manager SetContainerReadiness writes at once; the probe result also syncs the pod ("SyncLoop (probe)"). */
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
    worker.loop.update('sync');
  }

  private containerExited(worker: PodWorker, container: ContainerRecord, exitCode: number, exitedAt: number): void {
    const record = this.truth.for({ metadata: { uid: worker.uid, name: worker.name, namespace: worker.namespace } });
    record.exitedAt = exitedAt;
    record.exitCode = exitCode;
    container.exitCode = exitCode;
    // During killPod the exit is read from the runtime when it returns (SyncTerminatingPod); any other
    // exit reaches the pod worker as the PLEG's ContainerDied event at the end of the next relist.
    if (worker.killing) return;
    void this.pleg.newerThan(exitedAt, worker.uid).then(() => {
      record.exitSeenAt = wallNow();
      container.exitSeen = true;
      worker.loop.update('sync');
    });
  }

  /** Writes every exit seen so far in one status write; true once all containers have exited ("Pod is terminal"). */
  private publishExits(worker: PodWorker): boolean {
    const seen = [...worker.containers].filter(([, c]) => c.exitSeen);
    if (!seen.length) return false;
    const allExited = [...worker.containers.values()].every((c) => c.exitSeen);
    const updated = this.mutate(worker, (p) => {
      for (const [name, c] of seen) {
        const status = (p.status.containerStatuses as any[]).find((cs) => cs.name === name);
        if (!status || status.state.terminated) continue;
        const exitCode = c.exitCode ?? 0;
        status.ready = false;
        status.started = false;
        status.state = { terminated: {
          exitCode, reason: c.oomKilled ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error',
          startedAt: status.state.running?.startedAt ?? c.startedAt, finishedAt: apiTime(), containerID: status.containerID ?? `sim://${worker.uid}-${name}`,
        } };
      }
      if (allExited) {
        // The sandbox goes with the last container (killPodWithSyncResult stops it).
        const sandbox = (p.status.conditions as any[]).find((c) => c.type === 'PodReadyToStartContainers');
        if (sandbox && sandbox.status !== 'False') { sandbox.status = 'False'; sandbox.lastTransitionTime = apiTime(); }
        if (worker.evicted) {
          p.status.phase = 'Failed';
          p.status.reason = worker.evicted.reason;
          p.status.message = worker.evicted.message;
        } else {
          p.status.phase = (p.status.containerStatuses as any[]).every((cs) => cs.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
        }
      }
      // status/generate.go: a terminal phase names itself (PodCompleted, PodFailed); otherwise some container is not ready.
      const readyReason = !allExited ? 'ContainersNotReady' : p.status.phase === 'Failed' ? 'PodFailed' : 'PodCompleted';
      for (const condition of p.status.conditions as any[]) {
        if (condition.type === 'Ready' || condition.type === 'ContainersReady') {
          condition.status = 'False'; condition.reason = readyReason; condition.lastTransitionTime = apiTime();
        }
      }
    });
    if (allExited) {
      worker.finished = true;
      for (const prober of worker.probers) prober.stop();
    }
    return allExited && updated !== undefined;
  }

  /** SyncTerminatingPod: killPod with the grace as it is now; its return writes the containers' end. */
  private async syncTerminatingPod(worker: PodWorker): Promise<WorkType> {
    const running = [...worker.containers.values()].filter((c) => !c.process.hasExited);
    if (running.length) {
      const current = this.store.get('pods', worker.namespace, worker.name);
      const pod = current?.metadata.uid === worker.uid ? current : undefined;
      if (pod) {
        await this.killPod(worker, pod, Kubelet.calculateEffectiveGracePeriod(pod));
        await sleepAtLeast(this.timing.runtime.killPodReturnMs);
      }
    }
    const record = this.truth.for({ metadata: { uid: worker.uid, name: worker.name, namespace: worker.namespace } });
    for (const c of worker.containers.values()) {
      if (c.process.hasExited && !c.exitSeen) { c.exitSeen = true; record.exitSeenAt ??= wallNow(); }
    }
    this.publishExits(worker);
    return 'terminated';
  }

  /** SyncTerminatedPod, then the status manager: once the containers are gone it deletes the object with grace 0. */
  private syncTerminatedPod(worker: PodWorker): void {
    worker.finished = true;
    worker.finalDeleteIssued = true;
    for (const prober of worker.probers) prober.stop();
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
    worker?.loop.stop();
    this.workers.delete(pod.metadata.uid);
    this.pleg.forget(pod.metadata.uid);
  }

  /** pod_workers.go calculateEffectiveGracePeriod: the deletion's grace, else the spec's; never below 1 s. */
  static calculateEffectiveGracePeriod(pod: KubeObject): number {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    return Math.max(1, grace);
  }

  /** SyncLoop DELETE: the API server set deletionTimestamp; the pod worker is asked to terminate. */
  podDeleting(pod: KubeObject): void {
    const worker = this.workers.get(pod.metadata.uid);
    const record = this.truth.for(pod);
    record.deleteReceivedAt ??= wallNow();
    if (!worker || worker.finalDeleteIssued) return this.finishDeletion(pod);
    // The grace is read when SyncTerminatingPod begins, so a second DELETE that shortened it meanwhile counts.
    worker.loop.update('terminating');
  }

  private killPod(worker: PodWorker, pod: KubeObject, gracePeriod: number): Promise<void> {
    const truth = this.truth.for(pod);
    truth.gracePeriodSeconds = gracePeriod;
    const key = Faults.key(worker.namespace, worker.name);
    worker.killing = Promise.all([...worker.containers].filter(([, c]) => !c.process.hasExited).map(([name, c]) => killContainer({
      containerName: name, container: c.process, lifecycle: c.spec.lifecycle,
      portTarget: (port) => this.portTarget(worker.uid, resolvePort(port, c.spec.ports ?? [])), env: c.env, image: c.image, truth, ignoreSigterm: this.faults.ignoreSigterm.has(key),
      recordEvent: (type, reason, message) => this.recordEvent(pod, type, reason, message, `spec.containers{${name}}`),
    }, gracePeriod))).then(() => undefined);
    return worker.killing;
  }

  private syncTick(): void {
    const now = wallNow();
    for (const worker of this.workers.values()) {
      if (worker.deadlineAt !== undefined && now >= worker.deadlineAt && !worker.loop.terminationRequested) worker.loop.update('sync');
    }
  }

  /**
   * generateAPIPodStatus past the deadline: ShouldEvict makes the phase Failed, so Ready turns False
   * (PodFailed, status/generate.go) at once, but mergePodStatus holds back the terminal phase, reason and message
   * while containers could still run (status_manager.go). A terminal pod is no longer probed.
   */
  private deadlineExceeded(worker: PodWorker): WorkType | undefined {
    const reason = 'DeadlineExceeded';
    const message = 'Pod was active on the node longer than the specified deadline';
    worker.evicted = { reason, message };
    const pod = this.mutate(worker, (p) => {
      for (const condition of p.status.conditions as any[]) {
        if ((condition.type === 'Ready' || condition.type === 'ContainersReady') && condition.status !== 'False') {
          condition.status = 'False'; condition.reason = 'PodFailed'; condition.lastTransitionTime = apiTime();
        }
      }
    });
    if (!pod) return undefined;
    for (const prober of worker.probers) prober.stop();
    this.recordEvent(pod, 'Normal', reason, message);
    return 'terminating';
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
    clearInterval(this.syncTicker);
    this.oomKiller.stop();
    const exits: Promise<unknown>[] = [];
    for (const worker of this.workers.values()) {
      worker.loop.stop();
      for (const prober of worker.probers) prober.stop();
      for (const c of worker.containers.values()) { c.process.signal('SIGKILL'); exits.push(c.process.exited); }
    }
    await Promise.all(exits);
  }
}

function podPorts(pod: KubeObject): (ContainerPort & { hostPort?: number; protocol?: string })[] {
  return (pod.spec.containers as any[]).flatMap((c) => (c.ports ?? []) as any[]).filter((p) => (p.protocol ?? 'TCP') === 'TCP' && Number.isInteger(p.containerPort));
}
