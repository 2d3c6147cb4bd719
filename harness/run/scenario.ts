// One scenario as explicit phases: create → ready → observe → request → delete → terminate →
// collect → clean. One watch runs from the pod's creation to its end. Each phase returns its part
// of the observation; evidence is collected before cleanup, and the cleaner undoes in reverse.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import {
  deletePod,
  listEvents,
  nodeInfo,
  openPortForward,
  readPod,
  removeFinalizer,
  type PortForwardHandle,
} from '../kube/index.ts';
import type { DroppedField, HarnessTime, Observation } from '../observation/schema.ts';
import { stopSignalFromLivePod } from '../grade/stop-signal.ts';
import { rulesFor } from '../grade/theory.ts';
import { createPodWithinQuota } from '../safety/quota.ts';
import { HOLD_FINALIZER } from '../safety/labels.ts';
import { renderPod, requestPort } from '../scenario/render.ts';
import { withRetryService } from '../scenario/render-retry.ts';
import { hookDurationSeconds, type Scenario } from '../scenario/schema.ts';
import { Cleaner } from './cleaner.ts';
import { newRun, type PodPhase, runPhases, type ScenarioContext } from './phases.ts';
import { imagePullAdvice } from './image-pull.ts';
import { apiTimeString } from './clock.ts';
import { LogFollower } from './logs.ts';
import { buildObservation, type Recorded } from './observe.ts';
import { newRequestRecord, sendWork, type RequestRecord } from './request.ts';
import {
  collectRetryLab,
  directBase,
  idempotencyKeyOf,
  keyHeaders,
  readyStandby,
  type RetryLab,
  retriesRecord,
  runRetries,
  startRetryLab,
} from './retry-lab.ts';
import { allTerminated, isGone, isReady, PodWatch, type Sighting } from './watch.ts';

export type { ClusterRunContext, Phase, PodTracker, ScenarioContext } from './phases.ts';

/** Beyond grace + hook, how long the container may take to be seen ended (a slow kubelet). */
const TERMINATION_MARGIN_MS = 30_000;
/** After the container ended: how long the request may take to end, and the log stream to close. */
const REQUEST_END_AFTER_TERMINATION_MS = 10_000;
const LOG_END_AFTER_TERMINATION_MS = 5_000;
/** After the finalizer is removed: how long the pod may take to disappear. */
const POD_GONE_TIMEOUT_MS = 30_000;

const STUCK_REASONS = [
  'ErrImagePull',
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'InvalidImageName',
];
const isStuck = (p: k8s.V1Pod) =>
  p.status?.containerStatuses?.some(
    (c) => STUCK_REASONS.includes(c.state?.waiting?.reason ?? '') || c.state?.terminated,
  ) ?? false;
const seen = (test: (pod: k8s.V1Pod) => boolean) => (s: Sighting) => s.pod !== null && test(s.pod);

export function podNameFor(scenario: Scenario, runId: string, attempt = 1): string {
  return `tl-${scenario.name}-${runId.slice(-4)}${attempt > 1 ? `-${attempt}` : ''}`;
}

async function podEvents(ctx: ScenarioContext, name: string): Promise<Observation['evidence']['podEvents']> {
  try {
    const list = await listEvents(ctx.cluster, ctx.namespace, `involvedObject.name=${name}`);
    return list.items.map((e) => ({
      reason: e.reason ?? '',
      message: e.message ?? '',
      type: e.type ?? '',
      time: (e.lastTimestamp ?? e.eventTime ?? null) && new Date(String(e.lastTimestamp ?? e.eventTime)).toISOString(),
    }));
  } catch {
    return [];
  }
}

interface Created {
  name: string;
  uid: string;
  resourceVersion: string;
  deleted: { value: boolean };
}

/** create: the pod, and at once how to undo it (registered before anything can fail). */
async function createPhase(
  ctx: ScenarioContext,
  scenario: Scenario,
  name: string,
  cleaner: Cleaner,
  watchRef: () => PodWatch | null,
  ledgerUrl?: string,
): Promise<Created> {
  const { cluster, namespace } = ctx;
  const body = withRetryService(
    renderPod(ctx.template, scenario, {
      podName: name,
      owner: ctx.owner,
      identity: ctx.identity,
      runId: ctx.runId,
      image: ctx.image,
      env: ctx.env,
      ledgerUrl,
    }),
    scenario,
    name,
  );
  // A full class quota is waited out (bounded by --quota-wait), said on the progress line.
  let readBack = false;
  const pod = await createPodWithinQuota(cluster, namespace, body as k8s.V1Pod, {
    signal: ctx.signal,
    maxWaitMs: ctx.quotaWaitMs,
    onWait: (text) => ctx.onPhase('creating', text),
    onReadBack: () => {
      readBack = true;
    },
  });
  const uid = pod.metadata!.uid!;
  ctx.pods?.created(name);
  const deleted = { value: false };
  cleaner.defer('wait for DELETED', async () => {
    // After Ctrl-C the run does not wait out each pod's grace; the run's last list checks.
    if (ctx.signal.aborted) return 'skipped';
    const watch = watchRef();
    const gone = watch ? await watch.waitFor(isGone, POD_GONE_TIMEOUT_MS) : null;
    if (!gone) {
      // The watch missed it or could not say: ask the API.
      const read = watch ? await watch.read('final') : null;
      if (!read || read.found) throw new Error(`the pod was not seen gone within ${POD_GONE_TIMEOUT_MS / 1000}s`);
    }
    ctx.pods?.gone(name);
    return 'done';
  });
  cleaner.defer('delete pod', async () => {
    if (deleted.value) return 'skipped';
    const result = await deletePod(cluster, namespace, name, uid);
    deleted.value = true;
    return result === 'gone' ? 'gone' : 'done';
  });
  cleaner.defer(`remove finalizer ${HOLD_FINALIZER}`, async () => {
    const result = await removeFinalizer(cluster, namespace, name, HOLD_FINALIZER);
    return result === 'gone' ? 'gone' : 'done';
  });
  // A pod read back after its create's answer was lost may be Ready already: its watch then starts with no
  // version, so the API's first event is the pod as it is now (ADDED), not only what changes after.
  return { name, uid, resourceVersion: readBack ? '' : pod.metadata!.resourceVersion!, deleted };
}

/** ready: on the scenario's one watch; a pod stuck on its image fails at once, with its events. */
async function readyPhase(ctx: ScenarioContext, watch: PodWatch, name: string): Promise<{ podReady: HarnessTime }> {
  const sighting = await watch.waitFor(
    seen((p) => isReady(p) || isStuck(p)),
    ctx.readyTimeoutMs,
    ctx.signal,
  );
  if (sighting?.pod && isReady(sighting.pod)) return { podReady: ctx.clock.now() };
  if (ctx.signal.aborted) throw new TermlabError('INTERRUPTED', 'interrupted while waiting for the pod to be Ready');
  if (watch.gaveUp)
    throw new TermlabError(
      'API_UNREACHABLE',
      `the watch gave up while waiting for Ready: ${watch.lifecycle.at(-1)?.detail ?? ''}`,
    );
  const events = await podEvents(ctx, name);
  const warnings = events.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`);
  const waiting = sighting?.pod?.status?.containerStatuses?.[0]?.state?.waiting;
  const pull = sighting?.pod ? imagePullAdvice(sighting.pod, ctx.cluster.context) : null;
  throw new TermlabError(
    'POD_NOT_READY',
    `pod ${ctx.namespace}/${name} was not Ready within ${ctx.readyTimeoutMs / 1000}s${waiting ? ` (${waiting.reason}: ${waiting.message ?? ''})` : ''}${pull ? `; ${pull}` : ''}${warnings.length ? `; events: ${warnings.join('; ')}` : ''}`,
    { events },
  );
}

interface Observed {
  pod: NonNullable<Observation['pod']>;
  logs: LogFollower;
  node: { nodeName: string | null; runtime: string | null };
  base: string;
}
/** A sidecar's log, followed like the app's. */
export interface SidecarLog {
  container: string;
  logs: LogFollower;
}

/** observe: the log follow before any request, and the pod as the API holds it now. */
/** What a scenario holds open in this process: each registered with the cleaner the moment it exists. */
interface Held {
  logs: LogFollower | null;
  sidecarLogs: SidecarLog[];
  forward: PortForwardHandle<HarnessTime> | null;
}

async function observePhase(
  ctx: ScenarioContext,
  scenario: Scenario,
  created: Created,
  watch: PodWatch,
  cleaner: Cleaner,
  held: Held,
): Promise<Observed> {
  const { cluster, namespace, clock } = ctx;
  const spec = watch.pods.at(-1)?.spec;
  const container = spec?.containers[0]?.name ?? 'lab';
  const logs = new LogFollower();
  held.logs = logs;
  cleaner.defer('stop the log follow', async () => {
    logs.stop();
    return 'skipped';
  });
  // Every other container's log (a sidecar's) too, before any request: each its own evidence.
  const followers = [...(spec?.containers.slice(1) ?? []), ...(spec?.initContainers ?? [])].map((other) => {
    const follower = new LogFollower();
    held.sidecarLogs.push({ container: other.name, logs: follower });
    cleaner.defer(`stop the log follow of ${other.name}`, async () => {
      follower.stop();
      return 'skipped';
    });
    return follower.start(cluster, namespace, created.name, other.name, clock);
  });
  // Through the sidecar proxy when the pod has one, as a user's traffic would come.
  const port = requestPort(ctx.template, scenario);
  const forwarding =
    ctx.transport === 'portforward'
      ? openPortForward(cluster, namespace, created.name, port, () => clock.now()).then((forward) => {
          held.forward = forward;
          // Closed before the pod is deleted (last in, first out); a close that fails is recorded.
          cleaner.defer('close the port-forward', async () => {
            await forward.close();
            return 'skipped';
          });
          return forward;
        })
      : null;
  // The follows, the pod as it is now (not as the template said), its node and the forward are apart:
  // asked side by side, a busy API answers them in one round trip's time, not four (a class of 40 on one
  // machine took 50-67 s from Ready to the request). All settle before any request, and each is cleaned up.
  const [, , captured, node, forward] = await settleAll([
    logs.start(cluster, namespace, created.name, container, clock),
    Promise.all(followers),
    readCaptured(ctx, created, scenario),
    nodeInfo(cluster, spec?.nodeName),
    forwarding,
  ] as const);
  // A port published on the node (hostPort, as the simulated cluster does for every port) is
  // reached at the node's address; otherwise at the pod's own address.
  const base = forward ? `http://127.0.0.1:${forward.localPort}` : directBase(captured.pod, port);
  return { pod: captured.record, logs, node, base };
}

/** Promise.all that waits for every promise before it throws the first error: what opened is then held, and cleaned up. */
async function settleAll<T extends readonly unknown[]>(
  promises: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

async function readCaptured(
  ctx: ScenarioContext,
  created: Created,
  scenario: Scenario,
): Promise<{ pod: k8s.V1Pod; record: NonNullable<Observation['pod']> }> {
  const pod = await readPod(ctx.cluster, ctx.namespace, created.name, { signal: ctx.signal });
  const capturedAt = ctx.clock.now();
  if (!pod || pod.metadata?.uid !== created.uid)
    throw new TermlabError(
      'POD_GONE_EARLY',
      `pod ${created.name} was replaced or is gone (uid ${pod?.metadata?.uid ?? 'none'}, created ${created.uid})`,
    );
  const dropped = droppedFields(ctx, scenario, pod);
  for (const d of dropped) ctx.onNote?.(d.note);
  return {
    pod,
    record: {
      name: created.name,
      namespace: ctx.namespace,
      uid: created.uid,
      resourceVersion: pod.metadata!.resourceVersion!,
      terminationGracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? null,
      activeDeadlineSeconds: pod.spec?.activeDeadlineSeconds ?? null,
      capturedAt,
      // The wire form: lifecycle's model fields carry their JSON names, so a JSON round trip is verbatim.
      containers: [
        ...pod.spec!.containers.map((c) => ({ name: c.name, image: c.image ?? '', lifecycle: wireLifecycle(c) })),
        ...(pod.spec!.initContainers ?? []).map((c) => ({
          name: c.name,
          image: c.image ?? '',
          lifecycle: wireLifecycle(c),
          init: true,
          restartPolicy: c.restartPolicy ?? null,
        })),
      ],
      ...(dropped.length ? { dropped } : {}),
    },
  };
}

/**
 * What the scenario asked of the pod that the cluster left out, said in the run's output and the observation, never
 * silently: a lifecycle.stopSignal the API server dropped where its gate is off (the grader reads it again from
 * the lifecycle recorded beside it).
 */
function droppedFields(ctx: ScenarioContext, scenario: Scenario, pod: k8s.V1Pod): DroppedField[] {
  const lab = pod.spec?.containers[0];
  if (!lab) return [];
  const plan = stopSignalFromLivePod(scenario, wireLifecycle(lab), rulesFor(ctx.cluster.serverVersion).rules);
  return plan && !plan.delivered
    ? [{ container: lab.name, field: 'lifecycle.stopSignal', asked: plan.asked, note: plan.note }]
    : [];
}

const wireLifecycle = (c: k8s.V1Container) =>
  c.lifecycle ? (JSON.parse(JSON.stringify(c.lifecycle)) as Record<string, unknown>) : null;

/** request: GET /work; resolves once the server accepted it, with the promise of its end. */
async function requestPhase(
  ctx: ScenarioContext,
  scenario: Scenario,
  base: string,
  request: RequestRecord,
  cleaner: Cleaner,
): Promise<InFlight> {
  let markAccepted!: () => void;
  const accepted = new Promise<void>((resolve) => {
    markAccepted = resolve;
  });
  // Ctrl-C ends it, and so does the collect phase when its answer never ends (a torn-down pod network).
  const giveUp = new AbortController();
  // A retry scenario's key rides on every attempt, the first one too.
  const requestDone = sendWork(
    base,
    scenario.workMs,
    request,
    ctx.clock,
    () => markAccepted(),
    AbortSignal.any([ctx.signal, giveUp.signal]),
    keyHeaders(idempotencyKeyOf(scenario, request.id)),
  );
  // A request still open after a failure would hold the process: it ends with the scenario.
  const inFlight = { requestDone, giveUp: () => giveUp.abort() };
  cleaner.defer('end the request', async () => {
    inFlight.giveUp();
    return 'skipped';
  });
  await Promise.race([accepted, requestDone]);
  if (!request.accepted)
    throw new TermlabError(
      'REQUEST_NOT_ACCEPTED',
      `the request was not accepted (${request.outcome}${request.errorCode ? `, ${request.errorCode}` : ''})`,
      { outcome: request.outcome, errorCode: request.errorCode },
    );
  return inFlight;
}

interface InFlight {
  requestDone: Promise<RequestRecord>;
  giveUp(): void;
}

interface Deletion {
  deleteIssued: HarnessTime;
  deleteAck: NonNullable<Recorded['deleteAck']>;
  attempts: Observation['cleanup'];
}

/** delete: deleteDelayMs after acceptance, with a UID precondition; each failed attempt recorded. */
async function deletePhase(
  ctx: ScenarioContext,
  scenario: Scenario,
  created: Created,
  request: RequestRecord,
  attempts: Observation['cleanup'],
): Promise<Deletion> {
  const { clock } = ctx;
  const sinceAccepted = clock.now().mono - request.accepted!.mono;
  await sleep(Math.max(0, scenario.deleteDelayMs - sinceAccepted), undefined, { signal: ctx.signal });
  ctx.onPhase('deleting');
  let issued = clock.now();
  // An attempt cut after it was sent (reset, timeout: no answer, not refused) may have been applied:
  // the API stamps the deletion then, so the delete counts from that attempt, not from the retry that
  // got the answer (seen under load: the watch showed the deletion "before the harness issued the delete").
  let mayHaveLanded = false;
  const pod = await deletePod(ctx.cluster, ctx.namespace, created.name, created.uid, {
    gracePeriodSeconds: scenario.deleteGracePeriodSeconds,
    signal: ctx.signal,
    onAttempt: () => {
      if (!mayHaveLanded) issued = clock.now();
    },
    onTransientFailure: (failure, attempt) => {
      if (failure.status === null && failure.text !== 'ECONNREFUSED') mayHaveLanded = true;
      attempts.push({ action: `delete attempt ${attempt}`, at: clock.now(), ok: false, error: failure.text });
    },
  });
  if (pod === 'gone') throw new TermlabError('POD_GONE_EARLY', 'the pod was gone before it was deleted');
  created.deleted.value = true;
  return {
    deleteIssued: issued,
    deleteAck: {
      at: clock.now(),
      deletionTimestamp: apiTimeString(pod.metadata!.deletionTimestamp)!,
      deletionGracePeriodSeconds: pod.metadata!.deletionGracePeriodSeconds ?? scenario.terminationGracePeriodSeconds,
    },
    attempts,
  };
}

/** terminate: until the container is seen ended, by the watch or a read after a gap; then a final read. Exported for its test. */
export async function terminatePhase(ctx: ScenarioContext, scenario: Scenario, watch: PodWatch): Promise<void> {
  const base =
    (scenario.terminationGracePeriodSeconds + hookDurationSeconds(scenario.preStop)) * 1000 +
    TERMINATION_MARGIN_MS +
    ctx.cluster.health.patienceMs;
  // Every container: a native sidecar ends after the app, its own hook and grace after the app's.
  const sidecarMs = scenario.sidecar ? (hookDurationSeconds(scenario.sidecar.preStop) + 2) * 1000 : 0;
  const limitMs = base + sidecarMs;
  const ended = await watch.waitFor((s) => (s.pod !== null && allTerminated(s.pod)) || isGone(s), limitMs, ctx.signal);
  await watch.settle();
  await watch.read('final');
  if (ended) return;
  if (ctx.signal.aborted) throw new TermlabError('INTERRUPTED', 'interrupted before the container ended');
  if (watch.gaveUp)
    throw new TermlabError(
      'API_UNREACHABLE',
      `the watch gave up before the container ended: ${watch.lifecycle.at(-1)?.detail ?? ''}`,
    );
  throw new TermlabError(
    'CONTAINER_NOT_ENDED',
    `the container was not seen to end within ${Math.round(limitMs / 1000)}s`,
    { limitMs },
  );
}

/** A retry scenario's retries beyond the first attempt's end: each attempt's work and backoff, and this much more. */
const RETRIES_MARGIN_MS = 30_000;

/** collect, for a retry scenario: every attempt ended (bounded), then the standby's and the ledger's logs made whole. */
async function collectRetries(
  ctx: ScenarioContext,
  scenario: Scenario,
  lab: RetryLab,
  retries: { done: Promise<void>; giveUp(): void },
): Promise<void> {
  const boundMs = (scenario.retry!.attempts - 1) * (scenario.workMs + scenario.retry!.backoffMs) + RETRIES_MARGIN_MS;
  const timer = new AbortController();
  const ended = await Promise.race([
    retries.done.then(
      () => true,
      () => true,
    ),
    sleep(boundMs, false, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  if (!ended) {
    retries.giveUp();
    await retries.done.catch(() => {});
  }
  await collectRetryLab(ctx, lab);
}

/** collect: the request's end, the log (made whole if the API cut its stream), the pod's events. */
async function collectPhase(
  ctx: ScenarioContext,
  created: Created,
  inFlight: InFlight,
  logs: LogFollower,
  sidecarLogs: SidecarLog[],
): Promise<{ podEvents: Observation['evidence']['podEvents'] }> {
  const timer = new AbortController();
  const ended = await Promise.race([
    inFlight.requestDone.then(() => true),
    sleep(REQUEST_END_AFTER_TERMINATION_MS, false, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  // The container is gone and the answer still has no end: it never will. Recorded as cut, not left in flight.
  if (!ended) {
    inFlight.giveUp();
    await inFlight.requestDone;
  }
  for (const follower of [logs, ...sidecarLogs.map((l) => l.logs)]) {
    await follower.waitForEnd(LOG_END_AFTER_TERMINATION_MS);
    if (follower.error !== null || !follower.ended) {
      try {
        await follower.recover();
      } catch {
        /* the stream's own error stays on record */
      }
    }
  }
  return { podEvents: await podEvents(ctx, created.name) };
}

/** Runs one scenario and returns its observation; failures are recorded in it, never thrown. */
export async function runScenario(ctx: ScenarioContext, scenario: Scenario): Promise<Observation> {
  const { cluster, clock } = ctx;
  const attempt = ctx.attempt ?? 1;
  const name = podNameFor(scenario, ctx.runId, attempt);
  const request = newRequestRecord(`${scenario.name}-${ctx.runId.slice(-4)}${attempt > 1 ? `-${attempt}` : ''}`);
  const run = newRun(ctx, ctx.transport, {
    ...(attempt > 1 ? { attempt } : {}),
    ...(ctx.predictions ? { predictions: ctx.predictions } : {}),
  });
  const cleaner = new Cleaner(clock);
  const deleteAttempts: Observation['cleanup'] = [];
  const held: Held = { logs: null, sidecarLogs: [], forward: null };
  // What each phase returned, kept for the observation whatever phase the run stopped in.
  const got: {
    watch: PodWatch | null;
    watchEstablished: HarnessTime | null;
    created: Created | null;
    ready: { podReady: HarnessTime } | null;
    observed: Observed | null;
    deletion: Deletion | null;
    podEvents: Observation['evidence']['podEvents'];
    lab: RetryLab | null;
  } = {
    watch: null,
    watchEstablished: null,
    created: null,
    ready: null,
    observed: null,
    deletion: null,
    podEvents: [],
    lab: null,
  };

  const cleanup = await runPhases<PodPhase>(
    ctx,
    run,
    cleaner,
    async (phaseContext) => {
      // A retry scenario: the ledger behind its Service and the standby replica first, so both lab pods know the ledger.
      const lab = (got.lab = scenario.retry ? await startRetryLab(phaseContext, scenario, name, cleaner) : null);
      const created = (got.created = await createPhase(
        phaseContext,
        scenario,
        name,
        cleaner,
        () => got.watch,
        lab?.ledgerUrl,
      ));
      const watch = (got.watch = new PodWatch(
        cluster,
        ctx.namespace,
        name,
        created.uid,
        created.resourceVersion,
        clock,
      ));
      await watch.start();
      got.watchEstablished = clock.now();
      if (watch.gaveUp)
        throw new TermlabError(
          'API_UNREACHABLE',
          `the pod watch could not start: ${watch.lifecycle.at(-1)?.detail ?? ''}`,
        );

      phaseContext.onPhase('waiting for Ready');
      got.ready = await readyPhase(phaseContext, watch, name);
      const observed = (got.observed = await observePhase(phaseContext, scenario, created, watch, cleaner, held));
      if (lab) await readyStandby(phaseContext, lab, cleaner);

      phaseContext.onPhase('request in flight');
      const inFlight = await requestPhase(phaseContext, scenario, observed.base, request, cleaner);
      const stopRetries = new AbortController();
      const retries = lab
        ? {
            done: runRetries(
              phaseContext,
              scenario,
              lab,
              { uid: created.uid, base: observed.base },
              request,
              inFlight.requestDone,
              AbortSignal.any([ctx.signal, stopRetries.signal]),
            ),
            giveUp: () => stopRetries.abort(),
          }
        : null;
      if (retries)
        cleaner.defer('end the retries', async () => {
          retries.giveUp();
          await retries.done.catch(() => {});
          return 'skipped';
        });
      got.deletion = await deletePhase(phaseContext, scenario, created, request, deleteAttempts);

      phaseContext.onPhase('terminating');
      await terminatePhase(phaseContext, scenario, watch);

      phaseContext.onPhase('collecting');
      got.podEvents = (await collectPhase(phaseContext, created, inFlight, observed.logs, held.sidecarLogs)).podEvents;
      if (lab && retries) await collectRetries(phaseContext, scenario, lab, retries);
    },
    {
      onError: async (error) => {
        const events = error instanceof TermlabError ? error.context.events : undefined;
        got.podEvents = Array.isArray(events)
          ? (events as Observation['evidence']['podEvents'])
          : got.created
            ? await podEvents(ctx, name)
            : [];
      },
      afterCleanup: async () => {
        await got.watch?.settle();
        got.watch?.stop();
      },
    },
  );
  return finishScenario({ run, scenario, request, got, held, cleanup: [...deleteAttempts, ...cleanup] });
}

/** finish: the record of what each phase returned, as the observation the runner writes. */
function finishScenario({
  run,
  scenario,
  request,
  got,
  held,
  cleanup,
}: {
  run: Observation['run'];
  scenario: Scenario;
  request: RequestRecord;
  held: Held;
  cleanup: Observation['cleanup'];
  got: {
    watch: PodWatch | null;
    watchEstablished: HarnessTime | null;
    ready: { podReady: HarnessTime } | null;
    observed: Observed | null;
    deletion: Deletion | null;
    podEvents: Observation['evidence']['podEvents'];
    lab: RetryLab | null;
  };
}): Observation {
  run.cluster.nodeName = got.observed?.node.nodeName ?? null;
  run.cluster.containerRuntime = got.observed?.node.runtime ?? null;
  const observation = buildObservation({
    run,
    scenario,
    request,
    pod: got.observed?.pod ?? null,
    podReady: got.ready?.podReady ?? null,
    // The one watch is up from the pod's creation, before Ready and long before any request.
    watchEstablished: got.watch === null ? null : got.watchEstablished,
    deleteIssued: got.deletion?.deleteIssued ?? null,
    deleteAck: got.deletion?.deleteAck ?? null,
    watch: got.watch,
    logs: got.observed?.logs ?? held.logs,
    sidecarLogs: held.sidecarLogs,
    podEvents: got.podEvents,
    podReads: got.watch?.reads ?? [],
    cleanup,
    portForwardErrors: held.forward?.errors ?? [],
    transport: [...(held.forward?.life ?? [])],
  });
  // The retries part: attempt 1 as the observation's request says it ended (a forward's break is not a cut).
  if (got.lab) observation.retries = retriesRecord(got.lab, observation.request);
  return observation;
}
