// One verification as phases: watches → (temporary Service) → available → load → steady → act →
// rolled out and old pods gone → load tail → clean (LIFO). Each terminating pod is read live the
// moment its deletion is seen; the old pods' logs and the load pod's log are followed.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import { createPod, createService, deletePod, deleteService, readPod } from '../kube/index.ts';
import type { RolloutPodEvent } from '../observation/rollout.ts';
import { Cleaner } from '../run/cleaner.ts';
import { apiTimeString } from '../run/clock.ts';
import { LiveReads } from '../run/live-reads.ts';
import type { ClusterRunContext } from '../run/scenario.ts';
import { LogFollower } from '../run/logs.ts';
import { type FrameContext, newRun, type RolloutPhase, runPhases } from '../run/phases.ts';
import { ownershipLabels } from '../safety/labels.ts';
import { EXPIRES_ANNOTATION } from '../safety/reap-workloads.ts';
import { parseLoadLine } from '../../server/contract-schemas.ts';
import { needing, patchRestartedAt, RESTARTED_AT } from './kube.ts';
import { renderVerifyLoadPod, VERIFY_SCENARIO, workMsOf } from './load-pod.ts';
import {
  type EdgePlan,
  type Target,
  VERIFICATION_KIND,
  VERIFICATION_SCHEMA_VERSION,
  type VerificationObservation,
  type VerifyRequest,
} from '../observation/verification.ts';
import type { ReadTarget } from './target.ts';
import { VerifyWatches } from './watches.ts';
import { EDGE_DIAL_TIMEOUT_MS, EdgeLogs, type FailedSend } from './edge-logs.ts';

/** After the EndpointSlice lists every replica ready: time for the proxies to route to them all. */
const SERVICE_SETTLE_MS = 2_000;
/** Steady load this long before acting (beyond the first second of unbroken success). */
const STEADY_MS = 2_000;
/** After the rollout completed and the old pods are gone: how long the load goes on. */
export const LOAD_TAIL_MS = 3_000;
const LOG_POKE_MS = 100;
const GONE_MARGIN_MS = 60_000;
/** The Deployment's own default (spec.progressDeadlineSeconds). */
const DEFAULT_PROGRESS_DEADLINE_S = 600;
/** The load pod's own bound: it never sends longer than this (server/load.ts allows 30 min). */
const LOAD_MAX_MS = 30 * 60 * 1000;

type Raw = Record<string, any>;

/** A verification's phases: a rollout's, with its own watching first and the acting between. */
export type VerifyPhase = RolloutPhase | 'watching' | 'acting' | 'edge finishing';

export interface VerifyContext extends ClusterRunContext {
  request: VerifyRequest;
  /** The edge the load goes through (--via, --url); null or absent: the Service straight. */
  edge?: EdgePlan | null;
  read: ReadTarget;
  onPhase(phase: VerifyPhase, detail?: string): void;
}

/** How long the whole run may take: what the load pod's deadline and the run record's say. */
export function verifyBoundsMs(ctx: Pick<VerifyContext, 'read' | 'readyTimeoutMs'>): {
  rolloutMs: number;
  loadMs: number;
} {
  const d = ctx.read.target.deployment;
  const grace = Math.max(
    d.terminationGracePeriodSeconds ?? 30,
    ...ctx.read.target.pods.map((p) => p.terminationGracePeriodSeconds ?? 0),
  );
  const rolloutMs = ((d.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_S) + grace) * 1000 + GONE_MARGIN_MS;
  return { rolloutMs, loadMs: Math.min(LOAD_MAX_MS, rolloutMs + ctx.readyTimeoutMs * 2 + LOAD_TAIL_MS) };
}

const suffix = (runId: string) => runId.slice(-4);

/** The names of what a verification makes: its load pod and (when the plan says) its temporary Service. */
export function objectNames(
  request: Pick<VerifyRequest, 'deployment'>,
  runId: string,
): { loadPod: string; service: string } {
  return {
    loadPod: `termlab-verify-load-${suffix(runId)}`,
    service: `termlab-verify-${request.deployment}`.slice(0, 52).replace(/-+$/, '') + `-${suffix(runId)}`,
  };
}

/** The temporary Service the plan makes (labelled and expiring like every termlab object), or null. */
export function temporaryService(
  read: ReadTarget,
  name: string,
  owner: string,
  runId: string,
  loadMs: number,
): k8s.V1Service | null {
  const temp = read.service.temporary;
  if (!temp) return null;
  return {
    metadata: {
      name,
      labels: ownershipLabels(owner, runId, VERIFY_SCENARIO),
      annotations: { [EXPIRES_ANNOTATION]: new Date(Date.now() + loadMs + GONE_MARGIN_MS).toISOString() },
    },
    spec: {
      type: temp.type,
      selector: temp.selector,
      ports: [{ name: 'http', port: temp.port, targetPort: temp.targetPort as never, protocol: 'TCP' }],
    },
  };
}

const progressingOf = (d: Raw | null): Raw | undefined =>
  (d?.status?.conditions ?? []).find((c: Raw) => c.type === 'Progressing');

interface Stall {
  request: VerifyRequest;
  replicas: number;
  generation: number;
  oldLeft: number;
  victim: string | null;
  deployment: Raw | null;
  newPods: RolloutPodEvent[];
  oldUids: Set<string>;
  gone: Set<string>;
  condition: string;
  /** The controller said ProgressDeadlineExceeded (else verify's own bound ran out first). */
  byController: boolean;
  waitedS: number;
  boundS: number;
}

/** A rollout that did not complete, as one error naming the Deployment, what was waited for, what it is now and each new pod's state. */
function stalledError(s: Stall): TermlabError {
  const { deployment: name, namespace: ns, action } = s.request;
  const st = s.deployment?.status ?? {};
  const waitedFor =
    action === 'rollout-restart'
      ? `${s.replicas} updated, available replicas of generation ${s.generation} and its ${s.oldUids.size} old pod(s) gone`
      : `pod ${s.victim} gone and ${s.replicas} available replicas again`;
  const latest = new Map<string, RolloutPodEvent>();
  for (const e of s.newPods) if (!s.oldUids.has(e.uid)) latest.set(e.uid, e);
  const pods = [...latest.values()]
    .filter((e) => !s.gone.has(e.uid))
    .map((e) => {
      const c =
        e.containers.map((x) => `${x.state}${x.reason ? ` (${x.reason})` : ''}`).join(', ') || e.phase || 'no status';
      return `${e.name}: ${e.ready ? 'ready' : `not ready, ${c}`}`;
    });
  const why = s.byController
    ? `the Deployment controller gave up on it after progressDeadlineSeconds (${s.deployment?.spec?.progressDeadlineSeconds ?? '?'}s)`
    : `verify's own bound ran out (${s.boundS}s: progressDeadlineSeconds + the grace + 60s)`;
  return new TermlabError(
    'ROLLOUT_STALLED',
    [
      `deployment/${name} in namespace ${ns} did not finish rolling out: waited ${s.waitedS}s for ${waitedFor}, and ${why}`,
      `the Deployment says ${s.condition}`,
      `now: ${st.updatedReplicas ?? 0} updated, ${st.availableReplicas ?? 0} available, ${st.replicas ?? 0} in all; ${s.oldLeft} old pod(s) still there${pods.length ? `; new pod(s): ${pods.join('; ')}` : ''}`,
      `it is left as the rollout left it (\`kubectl rollout undo deployment/${name} -n ${ns}\` goes back); the load pod and anything else verify made are removed`,
    ].join('. '),
    { deployment: name, namespace: ns, waitedFor, condition: s.condition },
  );
}

export interface VerifyOutcome {
  observation: VerificationObservation;
  /** What ended the run early, when it was the cluster or the input (exit 3 or 2), not the app. */
  failure: TermlabError | null;
}

export async function runVerification(ctx: VerifyContext): Promise<VerifyOutcome> {
  const { cluster, request, read, clock } = ctx;
  const ns = request.namespace;
  const watches = new VerifyWatches(cluster, ns, clock);
  const cleaner = new Cleaner(clock);
  const bounds = verifyBoundsMs(ctx);
  const run = newRun(ctx, 'direct');
  const existing = read.service.existing;
  let service: Target['service'] = {
    name: existing?.metadata?.name ?? '',
    uid: existing?.metadata?.uid ?? '',
    temporary: false,
    type: existing?.spec?.type ?? 'ClusterIP',
    clusterIP: existing?.spec?.clusterIP ?? null,
    port: read.service.port,
    nodePort: existing?.spec?.ports?.find((p) => p.port === read.service.port)?.nodePort ?? null,
  };
  const tempName = objectNames(request, ctx.runId).service;
  if (read.service.temporary)
    service = {
      ...service,
      name: tempName,
      uid: '',
      temporary: true,
      type: read.service.temporary.type,
      clusterIP: null,
      nodePort: null,
    };
  const objects: VerificationObservation['objects'] = { loadPod: null, loadTarget: null };
  const timeline: VerificationObservation['timeline'] = {
    watchesEstablished: null,
    loadPodCreated: null,
    loadSteady: null,
    acted: null,
    rolloutComplete: null,
    loadEnded: null,
  };
  let acted: VerificationObservation['acted'] = null;
  let progressCondition: string | null = null;
  const liveReads = new LiveReads({ cluster, namespace: ns, clock });
  const followers = new Map<string, { pod: string; follower: LogFollower }>();
  const poker = setInterval(() => watches.poke(), LOG_POKE_MS);
  const edgeLogs = new EdgeLogs();
  // What ended the run early when it was the cluster or the input; a pod not ready is the app's, graded.
  let failure: TermlabError | null = null;
  const onFailure = (error: TermlabError) => {
    if (error.code !== 'POD_NOT_READY') failure = error;
  };
  const oldUids = new Set(read.target.pods.map((p) => p.uid));

  watches.onPod = (pod: Raw, event) => {
    const uid = event.uid;
    // The old pods' logs (their TERM and exit, when the app says so) and the load pod's records; through an
    // edge the new pods' too: their port and keep-alive timeout tie the edge's lines to them.
    const follow = event.role === 'load' || oldUids.has(uid) || Boolean(ctx.edge?.namespace);
    if (
      follow &&
      !followers.has(uid) &&
      event.type !== 'DELETED' &&
      event.containers.some((c) => c.state === 'running' || c.state === 'terminated')
    ) {
      const follower = new LogFollower();
      followers.set(uid, { pod: event.name, follower });
      void follower
        .start(cluster, ns, event.name, pod.spec?.containers?.[0]?.name ?? 'app', clock)
        .then(
          () => follower.waitForEnd(bounds.loadMs),
          () => false,
        )
        .finally(() => watches.poke());
    }
    if (event.role !== 'load' && event.deletionTimestamp)
      liveReads.start(event.name, uid, event.resourceVersion, { at: event.receivedAt, pod });
  };

  const loadLog = () => (objects.loadPod ? (followers.get(objects.loadPod.uid)?.follower ?? null) : null);
  // refusedInARow: answers of one 4xx status in a row before any request completed (a path the app does not serve).
  const load = {
    scanned: 0,
    started: false,
    ended: false,
    completedInARow: 0,
    completed: 0,
    refusedInARow: 0,
    refusedStatus: 0,
  };
  const scanLoad = () => {
    const lines = loadLog()?.lines ?? [];
    for (; load.scanned < lines.length; load.scanned++) {
      const line = parseLoadLine(lines[load.scanned]!.text);
      if (line?.event === 'request') {
        load.completedInARow = line.outcome === 'completed' ? load.completedInARow + 1 : 0;
        if (line.outcome === 'completed') load.completed++;
        const clientError =
          line.outcome === 'http-error' && line.status !== null && line.status >= 400 && line.status < 500
            ? line.status
            : 0;
        if (clientError && clientError === load.refusedStatus) load.refusedInARow++;
        else {
          load.refusedInARow = clientError ? 1 : 0;
          load.refusedStatus = clientError;
        }
      } else if (line?.event === 'load-start') load.started = true;
      else if (line?.event === 'load-end') load.ended = true;
    }
    return load;
  };
  const appEvents = () => watches.evidence.podEvents.filter((e) => e.role !== 'load');
  const goneUids = () =>
    new Set(
      appEvents()
        .filter((e) => e.type === 'DELETED')
        .map((e) => e.uid),
    );
  const replicas = read.target.deployment.replicas;
  const available = (generation: number) => () => {
    const st = watches.deployment?.status ?? {};
    return (
      (st.observedGeneration ?? 0) >= generation &&
      st.updatedReplicas === replicas &&
      st.availableReplicas === replicas &&
      st.replicas === replicas
    );
  };

  const cleanup = await runPhases<VerifyPhase, VerifyContext & FrameContext<VerifyPhase>>(
    { ...ctx, onFailure },
    run,
    cleaner,
    async ({ onPhase }) => {
      onPhase('watching');
      await watches.start({
        deployment: request.deployment,
        podSelector: read.podSelector,
        loadSelector: `termlab.io/run=${ctx.runId}`,
        service: service.name,
      });
      timeline.watchesEstablished = clock.now();
      if (ctx.edge?.namespace) await edgeLogs.start(cluster, ctx.edge.namespace, clock, ctx.signal);
      if (watches.gaveUp) throw new TermlabError('API_UNREACHABLE', 'a verification watch could not start');

      const temp = read.service.temporary;
      if (temp) {
        const body = temporaryService(read, tempName, ctx.owner, ctx.runId, bounds.loadMs)!;
        const made = await needing('create', 'services', ns, () =>
          createService(cluster, ns, body, { signal: ctx.signal }),
        );
        service = {
          ...service,
          uid: made.metadata!.uid!,
          clusterIP: made.spec?.clusterIP ?? null,
          nodePort: made.spec?.ports?.[0]?.nodePort ?? null,
        };
        cleaner.defer(`delete temporary service ${tempName}`, async () =>
          (await deleteService(cluster, ns, tempName, service.uid)) === 'gone' ? 'gone' : 'done',
        );
      }

      onPhase('waiting for available');
      const generation0 = read.deployment.metadata?.generation ?? 1;
      if (!(await watches.waitFor(available(generation0), ctx.readyTimeoutMs, ctx.signal))) {
        throw new TermlabError(
          'POD_NOT_READY',
          `deployment/${request.deployment} was not available (${replicas} updated, available replicas) within ${ctx.readyTimeoutMs / 1000}s: verify a Deployment at rest`,
        );
      }
      const sliceReady = () => {
        // Slices are per Service and may be several: the newest event of each.
        const latest = new Map<string, (typeof watches.evidence.sliceEvents)[number]>();
        for (const s of watches.evidence.sliceEvents) latest.set(s.name, s);
        return (
          [...latest.values()]
            .filter((s) => s.type !== 'DELETED')
            .flatMap((s) => s.endpoints)
            .filter((e) => e.ready).length >= replicas
        );
      };
      if (!(await watches.waitFor(sliceReady, ctx.readyTimeoutMs, ctx.signal)))
        throw new TermlabError(
          'POD_NOT_READY',
          `Service ${service.name}'s EndpointSlices did not list ${replicas} ready endpoints within ${ctx.readyTimeoutMs / 1000}s`,
        );
      await sleep(SERVICE_SETTLE_MS, undefined, { signal: ctx.signal });

      onPhase('load starting');
      if (ctx.edge) objects.loadTarget = ctx.edge.target;
      else if (ctx.simulated) {
        const hostIP = read.target.pods[0]
          ? (await readPod(cluster, ns, read.target.pods[0].name))?.status?.hostIP
          : undefined;
        if (!service.nodePort)
          throw new TermlabError(
            'USAGE',
            `Service ${service.name} has no nodePort: the simulated cluster routes only NodePorts`,
          );
        objects.loadTarget = `http://${hostIP ?? '127.0.0.1'}:${service.nodePort}`;
      } else {
        if (!service.clusterIP || service.clusterIP === 'None')
          throw new TermlabError(
            'USAGE',
            `Service ${service.name} has no ClusterIP (headless): the load goes through a ClusterIP, as clients do; give --service`,
          );
        objects.loadTarget = `http://${service.clusterIP}:${service.port}`;
      }
      const loadName = objectNames(request, ctx.runId).loadPod;
      const body = renderVerifyLoadPod(ctx.template, request, {
        name: loadName,
        owner: ctx.owner,
        identity: ctx.identity,
        runId: ctx.runId,
        target: objects.loadTarget,
        durationMs: bounds.loadMs,
        deadlineSeconds: Math.ceil(bounds.loadMs / 1000) + 60,
        edge: ctx.edge ?? null,
      });
      const made = await needing('create', 'pods', ns, () =>
        createPod(cluster, ns, body as k8s.V1Pod, { signal: ctx.signal }),
      );
      objects.loadPod = { name: loadName, uid: made.metadata!.uid! };
      timeline.loadPodCreated = clock.now();
      cleaner.defer(`delete load pod ${loadName}`, async () =>
        (await deletePod(cluster, ns, loadName, objects.loadPod!.uid)) === 'gone' ? 'gone' : 'done',
      );
      if (!(await watches.waitFor(() => scanLoad().started, ctx.readyTimeoutMs, ctx.signal)))
        throw new TermlabError(
          'POD_NOT_READY',
          `the load pod ${loadName} did not start its load within ${ctx.readyTimeoutMs / 1000}s`,
        );
      const wrongPath = () => load.completed === 0 && load.refusedInARow >= request.rate;
      if (
        !(await watches.waitFor(
          () => scanLoad().completedInARow >= request.rate || wrongPath(),
          ctx.readyTimeoutMs,
          ctx.signal,
        ))
      ) {
        throw new TermlabError(
          'POD_NOT_READY',
          `requests through Service ${service.name} (${objects.loadTarget}${request.path}) did not complete steadily for a second within ${ctx.readyTimeoutMs / 1000}s: is the path right, and does it answer 2xx?`,
        );
      }
      if (wrongPath()) {
        throw new TermlabError(
          'USAGE',
          `--path ${request.path}: the app answered HTTP ${load.refusedStatus} to each of the first ${load.refusedInARow} requests through Service ${service.name} and none answered 2xx: give --path a path it serves (the lab image: '/work?ms=200'); deployment/${request.deployment} was not changed`,
          { path: request.path, status: load.refusedStatus },
        );
      }
      timeline.loadSteady = clock.now();
      await sleep(STEADY_MS, undefined, { signal: ctx.signal });

      onPhase('acting');
      for (const e of appEvents()) oldUids.add(e.uid);
      let done: () => boolean;
      if (request.action === 'rollout-restart') {
        const value = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const current = watches.deployment ?? read.deployment;
        const patched = await patchRestartedAt(cluster, ns, current as k8s.V1Deployment, value);
        timeline.acted = clock.now();
        const generation = patched.metadata?.generation ?? generation0 + 1;
        acted = {
          action: request.action,
          at: timeline.acted,
          restartedAt: patched.spec?.template.metadata?.annotations?.[RESTARTED_AT] ?? value,
          generation,
          pod: null,
        };
        done = () => {
          const gone = goneUids();
          return available(generation)() && [...oldUids].every((u) => gone.has(u));
        };
      } else {
        const ready = appEvents().filter((e) => !e.deletionTimestamp);
        const latest = new Map(ready.map((e) => [e.uid, e]));
        const victim = [...latest.values()]
          .filter((e) => e.ready && !goneUids().has(e.uid))
          .sort((a, b) => a.name.localeCompare(b.name))[0];
        if (!victim)
          throw new TermlabError('POD_NOT_READY', `deployment/${request.deployment} has no Ready pod to delete`);
        const answer = await needing('delete', 'pods', ns, () =>
          deletePod(cluster, ns, victim.name, victim.uid, { signal: ctx.signal }),
        );
        timeline.acted = clock.now();
        acted = {
          action: request.action,
          at: timeline.acted,
          restartedAt: null,
          generation: null,
          pod: {
            name: victim.name,
            uid: victim.uid,
            deletionTimestamp: answer === 'gone' ? null : apiTimeString(answer.metadata?.deletionTimestamp),
          },
        };
        done = () => goneUids().has(victim.uid) && available(generation0)();
      }

      onPhase('rolling out');
      // The Deployment controller's own word that the rollout stopped moving (progressDeadlineSeconds
      // passed with no progress, for the generation acted on): waiting longer would change nothing.
      const generation = acted?.generation ?? generation0;
      const exceeded = () => {
        const cond = progressingOf(watches.deployment);
        return (
          cond?.status === 'False' &&
          cond.reason === 'ProgressDeadlineExceeded' &&
          (watches.deployment?.status?.observedGeneration ?? 0) >= generation
        );
      };
      const waitStart = performance.now();
      await watches.waitFor(() => done() || exceeded(), bounds.rolloutMs, ctx.signal);
      if (!done()) {
        if (ctx.signal.aborted) throw new Error('interrupted');
        const cond = progressingOf(watches.deployment);
        progressCondition = cond
          ? `Progressing=${cond.status} (${cond.reason}): ${cond.message}`
          : 'no Progressing condition (the Deployment sets none without progressDeadlineSeconds)';
        throw stalledError({
          request,
          replicas,
          generation,
          oldLeft: [...oldUids].filter((u) => !goneUids().has(u)).length,
          victim: acted?.pod?.name ?? null,
          deployment: watches.deployment,
          newPods: appEvents(),
          oldUids,
          gone: goneUids(),
          condition: progressCondition,
          byController: exceeded(),
          waitedS: Math.round((performance.now() - waitStart) / 1000),
          boundS: Math.round(bounds.rolloutMs / 1000),
        });
      }
      timeline.rolloutComplete = clock.now();

      onPhase('load finishing');
      await sleep(LOAD_TAIL_MS, undefined, { signal: ctx.signal });
      // Its pod's TERM ends the sending; what is in flight still ends and is logged, then load-end.
      await deletePod(cluster, ns, objects.loadPod.name, objects.loadPod.uid, { signal: ctx.signal });
      const ended = () => scanLoad().ended && (loadLog()?.ended ?? false);
      if (!(await watches.waitFor(ended, workMsOf(request.path) + GONE_MARGIN_MS, ctx.signal)))
        throw new Error('the load pod did not finish its load in time');
      timeline.loadEnded = clock.now();

      // The edge logs a request when it ends: one it was still dialling (a deleted pod's address) ends at its dial
      // timeout, after the load gave up on it. Its line is the evidence of where it went: wait for it.
      if (ctx.edge?.namespace) {
        const failed: FailedSend[] = [];
        for (const l of loadLog()?.lines ?? []) {
          const r = parseLoadLine(l.text);
          if (r?.event === 'request' && r.outcome !== 'completed')
            failed.push({ id: r.id, requestId: r.requestId ?? null, sentMs: Date.parse(r.sent.time) });
        }
        const unlogged = edgeLogs.unlogged(failed);
        if (unlogged.length) {
          onPhase(
            'edge finishing',
            `${unlogged.length} failed request(s) not in the edge's log yet: it logs a request when it ends, one sent to a deleted pod's address at its ${EDGE_DIAL_TIMEOUT_MS / 1000}s dial timeout`,
          );
          await edgeLogs.awaitLines(unlogged, ctx.signal);
          if (ctx.signal.aborted) throw new Error('interrupted');
        }
      }
    },
    {
      // The logs stop being followed and looked at before anything is deleted.
      beforeCleanup: () => {
        for (const { follower } of followers.values()) if (!follower.ended) follower.stop();
        edgeLogs.stop();
        clearInterval(poker);
      },
      afterCleanup: async () => {
        await liveReads.settle();
        watches.stop();
        watches.keepOwnEvents();
      },
    },
  );
  const logOf = (uid: string) => {
    const f = followers.get(uid)!;
    return {
      pod: f.pod,
      uid,
      lines: f.follower.lines,
      ended: f.follower.ended && f.follower.error === null,
      error: f.follower.error,
    };
  };
  const evidence = watches.evidence;
  evidence.podLogs = [...followers.keys()].filter((u) => u !== objects.loadPod?.uid).map(logOf);
  evidence.loadLog = objects.loadPod && followers.has(objects.loadPod.uid) ? logOf(objects.loadPod.uid) : null;
  if (ctx.edge?.namespace) evidence.edgeLogs = edgeLogs.logs(timeline.watchesEstablished?.wall ?? null);
  const observation: VerificationObservation = {
    schemaVersion: VERIFICATION_SCHEMA_VERSION,
    kind: VERIFICATION_KIND,
    run,
    request,
    target: { ...read.target, service },
    objects,
    acted,
    timeline,
    progressCondition,
    edge: ctx.edge ?? null,
    liveReads: liveReads.settled(),
    evidence,
    cleanup,
  };
  return { observation, failure };
}
