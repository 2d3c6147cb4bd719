// One scenario, in order: create, wait Ready, watch and log first, capture the live pod, send the
// request, delete during it, record to the end, clean up. Evidence is collected before cleanup,
// cleanup runs in reverse order of creation, and "already gone" counts as success.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../errors.ts';
import { apiErrorText, isNotFound, nodeInfo, removeFinalizer, type Cluster } from '../kube.ts';
import type { HarnessTime, Observation } from '../observation.ts';
import { HOLD_FINALIZER } from '../safety/labels.ts';
import { labPort, renderPod } from '../scenario/render.ts';
import { hookDurationSeconds, type Scenario } from '../scenario/schema.ts';
import { apiTimeString, type RunClock } from './clock.ts';
import { LogFollower } from './logs.ts';
import { buildObservation, type Recorded } from './observe.ts';
import { openPortForward, type PortForwardHandle } from './portforward.ts';
import { newRequestRecord, sendWork } from './request.ts';
import { PodWatch } from './watch.ts';

export type Phase = 'creating' | 'waiting for Ready' | 'request in flight' | 'deleting' | 'terminating' | 'cleaning up' | 'done' | 'failed';

export interface ScenarioContext {
  cluster: Cluster;
  namespace: string;
  runId: string;
  owner: string;
  harnessVersion: string;
  simulated: boolean;
  template: Record<string, any>;
  image?: string;
  transport: 'portforward' | 'direct';
  clock: RunClock;
  signal: AbortSignal;
  readyTimeoutMs: number;
  onPhase(phase: Phase, detail?: string): void;
}

const isReady = (p: k8s.V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const isStuck = (p: k8s.V1Pod) => p.status?.containerStatuses?.some((c) => ['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'CrashLoopBackOff', 'CreateContainerConfigError', 'InvalidImageName'].includes(c.state?.waiting?.reason ?? '') || c.state?.terminated) ?? false;
const hasTerminated = (p: k8s.V1Pod) => p.status?.containerStatuses?.some((c) => c.state?.terminated) ?? false;

export function podNameFor(scenario: Scenario, runId: string): string {
  return `tl-${scenario.name}-${runId.slice(-4)}`;
}

async function podEvents(ctx: ScenarioContext, name: string): Promise<Observation['evidence']['podEvents']> {
  try {
    const list = await ctx.cluster.core.listNamespacedEvent({ namespace: ctx.namespace, fieldSelector: `involvedObject.name=${name}` });
    return list.items.map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? '', time: (e.lastTimestamp ?? e.eventTime ?? null) && new Date(String(e.lastTimestamp ?? e.eventTime)).toISOString() }));
  } catch {
    return [];
  }
}

/** Runs one scenario and returns its observation; failures are recorded in it, never thrown. */
export async function runScenario(ctx: ScenarioContext, scenario: Scenario): Promise<Observation> {
  const { cluster, namespace, clock } = ctx;
  const name = podNameFor(scenario, ctx.runId);
  const request = newRequestRecord(`${scenario.name}-${ctx.runId.slice(-4)}`);
  const recorded: Recorded = {
    run: {
      runId: ctx.runId, ownerId: ctx.owner, harnessVersion: ctx.harnessVersion, observedAt: clock.now().wall, complete: false,
      cluster: { context: cluster.context, server: cluster.server, serverVersion: cluster.serverVersion, nodeName: null, containerRuntime: null, simulated: ctx.simulated },
      transport: ctx.transport,
    },
    scenario, pod: null, podReady: null, watchEstablished: null, deleteIssued: null, deleteAck: null, request,
    watch: null, logs: null, podEvents: [], podReads: [], cleanup: [], portForwardErrors: [],
  };
  let uid: string | null = null;
  let created = false;
  let deleted = false;
  let forward: PortForwardHandle | null = null;
  let phase: Phase = 'creating';
  const onPhase = (next: Phase, detail?: string) => { phase = next; ctx.onPhase(next, detail); };
  const cleanupStep = async (action: string, step: () => Promise<unknown>) => {
    try {
      await step();
      recorded.cleanup.push({ action, at: clock.now(), ok: true, error: null });
    } catch (error) {
      recorded.cleanup.push({ action, at: clock.now(), ok: isNotFound(error), error: isNotFound(error) ? 'already gone' : apiErrorText(error) });
    }
  };

  try {
    onPhase('creating');
    const body = renderPod(ctx.template, scenario, { podName: name, owner: ctx.owner, runId: ctx.runId, image: ctx.image });
    const createdPod = await cluster.core.createNamespacedPod({ namespace, body });
    created = true;
    uid = createdPod.metadata!.uid!;

    onPhase('waiting for Ready');
    const readyWatch = new PodWatch(cluster, namespace, name, createdPod.metadata!.resourceVersion!, clock);
    await readyWatch.start();
    const ready = await readyWatch.waitFor((p) => isReady(p) || isStuck(p), ctx.readyTimeoutMs, ctx.signal);
    readyWatch.stop();
    if (!ready || !isReady(ready)) {
      if (ctx.signal.aborted) throw new TermlabError('INTERRUPTED', 'interrupted while waiting for the pod to be Ready');
      const events = await podEvents(ctx, name);
      recorded.podEvents = events;
      const warnings = events.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`);
      const waiting = ready?.status?.containerStatuses?.[0]?.state?.waiting;
      throw new TermlabError('POD_NOT_READY', `pod ${namespace}/${name} was not Ready within ${ctx.readyTimeoutMs / 1000}s${waiting ? ` (${waiting.reason}: ${waiting.message ?? ''})` : ''}${warnings.length ? `; events: ${warnings.join('; ')}` : ''}`);
    }
    recorded.podReady = clock.now();

    // The watch and the log follow start before any request is sent.
    const live = await cluster.core.readNamespacedPod({ name, namespace });
    const watch = new PodWatch(cluster, namespace, name, live.metadata!.resourceVersion!, clock);
    recorded.watch = watch;
    await watch.start();
    recorded.watchEstablished = clock.now();
    const container = live.spec!.containers[0]!;
    const logs = new LogFollower();
    recorded.logs = logs;
    await logs.start(cluster, namespace, name, container.name, clock);

    // The pod as it is now, not as the template said.
    const captured = await cluster.core.readNamespacedPod({ name, namespace });
    const capturedAt = clock.now();
    if (captured.metadata?.uid !== uid) throw new Error(`pod ${name} was replaced (uid ${captured.metadata?.uid}, created ${uid})`);
    recorded.pod = {
      name, namespace, uid, resourceVersion: captured.metadata!.resourceVersion!,
      terminationGracePeriodSeconds: captured.spec?.terminationGracePeriodSeconds ?? null, capturedAt,
      // The wire form: lifecycle's model fields carry their JSON names, so a JSON round trip is verbatim.
      containers: captured.spec!.containers.map((c) => ({ name: c.name, image: c.image ?? '', lifecycle: c.lifecycle ? JSON.parse(JSON.stringify(c.lifecycle)) as Record<string, unknown> : null })),
    };
    const node = await nodeInfo(cluster, captured.spec?.nodeName);
    recorded.run.cluster.nodeName = node.nodeName;
    recorded.run.cluster.containerRuntime = node.runtime;

    const port = labPort(ctx.template);
    let base: string;
    if (ctx.transport === 'portforward') {
      forward = await openPortForward(cluster.kc, namespace, name, port);
      recorded.portForwardErrors = forward.errors;
      base = `http://127.0.0.1:${forward.localPort}`;
    } else {
      // A port published on the node (hostPort, as the simulated cluster does for every port) is
      // reached at the node's address; otherwise the pod's own address.
      const hostPort = captured.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.containerPort === port)?.hostPort;
      base = hostPort ? `http://${captured.status?.hostIP}:${hostPort}` : `http://${captured.status?.podIP}:${port}`;
    }

    onPhase('request in flight');
    let markAccepted!: () => void;
    const accepted = new Promise<void>((resolve) => { markAccepted = resolve; });
    const requestDone = sendWork(base, scenario.workMs, request, clock, () => markAccepted(), ctx.signal);
    await Promise.race([accepted, requestDone]);
    if (!request.accepted) throw new Error(`the request was not accepted (${request.outcome}${request.errorCode ? `, ${request.errorCode}` : ''})`);

    const sinceAccepted = clock.now().mono - request.accepted.mono;
    await sleep(Math.max(0, scenario.deleteDelayMs - sinceAccepted), undefined, { signal: ctx.signal });

    onPhase('deleting');
    const ack = await deleteWithRetry(ctx, name, uid, recorded);
    deleted = true;
    recorded.deleteAck = {
      at: ack.at,
      deletionTimestamp: apiTimeString(ack.pod.metadata!.deletionTimestamp)!,
      deletionGracePeriodSeconds: ack.pod.metadata!.deletionGracePeriodSeconds ?? scenario.terminationGracePeriodSeconds,
    };

    onPhase('terminating');
    const limitMs = (scenario.terminationGracePeriodSeconds + hookDurationSeconds(scenario.preStop) + 30) * 1000;
    const terminated = await watch.waitFor(hasTerminated, limitMs, ctx.signal);
    if (!terminated) throw new Error(ctx.signal.aborted ? 'interrupted before the container ended' : `the container was not seen to end within ${limitMs / 1000}s`);
    await Promise.race([requestDone, sleep(10_000)]);
    await logs.waitForEnd(5_000);
    recorded.podEvents = await podEvents(ctx, name);

    onPhase('cleaning up');
    await cleanupStep(`remove finalizer ${HOLD_FINALIZER}`, () => removeFinalizer(cluster, namespace, name, HOLD_FINALIZER));
    const gone = await watch.waitFor((_p, type) => type === 'DELETED', 30_000, ctx.signal);
    recorded.cleanup.push({ action: 'wait for DELETED', at: clock.now(), ok: gone !== null, error: gone ? null : 'no DELETED event within 30s' });
    recorded.run.complete = true;
  } catch (error) {
    recorded.run.incompleteReason = ctx.signal.aborted
      ? `interrupted (Ctrl-C) while ${phase}`
      : error instanceof Error ? error.message : String(error);
    if (!recorded.podEvents.length && created) recorded.podEvents = await podEvents(ctx, name);
  } finally {
    recorded.watch?.stop();
    recorded.logs?.stop();
    if (forward) await forward.close();
    if (created && !recorded.run.complete) {
      // Reverse order of creation: the finalizer we added, then the pod itself.
      await cleanupStep(`remove finalizer ${HOLD_FINALIZER}`, () => removeFinalizer(cluster, namespace, name, HOLD_FINALIZER));
      if (!deleted) await cleanupStep('delete pod', () => cluster.core.deleteNamespacedPod({ name, namespace, body: uid ? { preconditions: { uid } } : undefined }));
    }
    recorded.run.observedAt = clock.now().wall;
  }
  onPhase(recorded.run.complete ? 'done' : 'failed', recorded.run.incompleteReason);
  return buildObservation(recorded);
}

/** A failed delete is tried again a few times; each failure is kept in the record. */
async function deleteWithRetry(ctx: ScenarioContext, name: string, uid: string, recorded: Recorded): Promise<{ at: HarnessTime; pod: k8s.V1Pod }> {
  for (let attempt = 1; ; attempt++) {
    const issued = ctx.clock.now();
    try {
      const pod = await ctx.cluster.core.deleteNamespacedPod({ name, namespace: ctx.namespace, body: { preconditions: { uid }, gracePeriodSeconds: recorded.scenario.deleteGracePeriodSeconds } });
      recorded.deleteIssued = issued;
      return { at: ctx.clock.now(), pod };
    } catch (error) {
      recorded.cleanup.push({ action: `delete attempt ${attempt}`, at: ctx.clock.now(), ok: false, error: apiErrorText(error) });
      if (attempt >= 3 || isNotFound(error)) throw new Error(`delete failed: ${apiErrorText(error)}`);
      await sleep(200 * attempt, undefined, { signal: ctx.signal });
    }
  }
}
