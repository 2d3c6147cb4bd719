// One rollout scenario as phases: watch → service → deployment → available → load → change the
// template → rolled out → load ended → clean. The four watches start before anything is created;
// each terminating pod is read live the moment its deletion is seen; every pod's log is followed.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../errors.ts';
import { createDeployment, createPod, createService, deleteDeployment, deletePod, deleteService, readPod, replaceDeploymentTemplate } from '../kube/index.ts';
import { ROLLOUT_KIND, ROLLOUT_SCHEMA_VERSION, type LiveRead, type RolloutObservation } from '../observation-rollout.ts';
import type { HarnessTime } from '../observation.ts';
import { labSelector, renderDeployment, renderLoadPod, renderPodTemplate, renderService, SERVICE_PORT } from '../scenario/render-rollout.ts';
import { type RolloutScenario, rolloutDeadlineSeconds } from '../scenario/rollout.ts';
import { Cleaner } from './cleaner.ts';
import { newRun, type RolloutPhase, runPhases } from './phases.ts';
import { apiTimeString } from './clock.ts';
import { LogFollower } from './logs.ts';
import { liveContainers, RolloutWatches } from './rollout-watch.ts';
import { parseLoadLine } from '../../server/contract-schemas.ts';
import type { ScenarioContext } from './scenario.ts';

/** Beyond the load and the pods' grace: how long the rollout may take to complete. */
const ROLLOUT_MARGIN_MS = 60_000;
/** After the lab pods are gone in cleanup, or the load pod's end: how long to wait for it. */
const GONE_TIMEOUT_MS = 60_000;
/** How long the end waits for live reads still under way. */
const READS_SETTLE_MS = 10_000;
/** How often a followed log's new lines are looked at by the phase waiting on them. */
const LOG_POKE_MS = 100;
/**
 * After the EndpointSlice lists every replica ready: time for every proxy to route to them before
 * the load starts (kube-proxy applies a change within its 1 s minSyncPeriod, plus the rewrite).
 */
const SERVICE_SETTLE_MS = 2_000;
/** After the rollout completed: how long the load goes on before the harness stops it (deletes its pod). */
const LOAD_TAIL_MS = 3_000;

type Raw = Record<string, any>;

export function rolloutNameFor(scenario: RolloutScenario, runId: string): string {
  return `tl-${scenario.name}-${runId.slice(-4)}`;
}

export async function runRollout(ctx: ScenarioContext, scenario: RolloutScenario): Promise<RolloutObservation> {
  const { cluster, namespace, clock } = ctx;
  const name = rolloutNameFor(scenario, ctx.runId);
  const renderOptions = { name, owner: ctx.owner, identity: ctx.identity, runId: ctx.runId, image: ctx.image, env: ctx.env, expiresAt: Date.now() + rolloutDeadlineSeconds(scenario) * 1000 };
  const selector = Object.entries(labSelector(scenario, renderOptions)).map(([k, v]) => `${k}=${v}`).join(',');
  const podSelector = selector.split(',').filter((s) => !s.startsWith('termlab.io/role=')).join(',');
  const run = newRun(ctx, 'direct');
  const watches = new RolloutWatches(cluster, namespace, clock);
  const cleaner = new Cleaner(clock);
  const objects: RolloutObservation['objects'] = { deployment: null, service: null, loadPod: null, target: null };
  const template: RolloutObservation['template'] = { before: null, after: null };
  const timeline: RolloutObservation['timeline'] = { watchesEstablished: null, deploymentAvailable: null, loadPodCreated: null, templateChanged: null, rolloutComplete: null, loadEnded: null };
  // Each terminating lab pod read live the moment its deletion is seen; in the order they began.
  const liveReads: PendingRead[] = [];
  const startLiveRead = (pod: string, uid: string, after: string): PendingRead => {
    const began = clock.now();
    const pending: PendingRead = { pod, uid, began, after, result: null };
    const read = readPod(cluster, namespace, pod).then((live) => { pending.result = liveReadOf(pod, uid, after, clock.now(), live); }, () => { /* the read failed: it stays not found */ });
    pendingReads.add(read);
    void read.finally(() => pendingReads.delete(read));
    return pending;
  };
  const followers = new Map<string, { pod: string; follower: LogFollower }>();
  const pendingReads = new Set<Promise<unknown>>();
  // The load's lines are read as they come (waiting phases look at them), once each.
  const poker = setInterval(() => watches.poke(), LOG_POKE_MS);
  cleaner.defer('stop looking at the logs', async () => { clearInterval(poker); return 'skipped'; });

  // Every pod: its log followed once its container runs; a lab pod read live at its deletion.
  watches.onPod = (_type, pod: Raw, event) => {
    const uid = event.uid;
    if (!followers.has(uid) && event.containers.some((c) => c.state === 'running' || c.state === 'terminated') && event.type !== 'DELETED') {
      const follower = new LogFollower();
      followers.set(uid, { pod: event.name, follower });
      // The logs of old pods end with their containers; the new pods' are cut before the deletions.
      cleaner.defer(`stop the log follow of ${event.name}`, async () => { if (!follower.ended) follower.stop(); return 'skipped'; });
      // A stream's end wakes the waiters at once; new lines are looked at by the run's one poker.
      void follower.start(cluster, namespace, event.name, pod.spec?.containers?.[0]?.name ?? 'lab', clock)
        .then(() => follower.waitForEnd(rolloutDeadlineSeconds(scenario) * 1000), () => false)
        .finally(() => watches.poke());
    }
    if (event.role === 'lab' && event.deletionTimestamp && !liveReads.some((r) => r.uid === uid || r.pod === event.name)) {
      liveReads.push(startLiveRead(event.name, uid, event.resourceVersion));
    }
  };

  const loadLog = () => (objects.loadPod ? followers.get(objects.loadPod.uid)?.follower ?? null : null);
  // What the load's log has said so far, scanned incrementally: at 200 lines a second a rescan per look would cost.
  const load = { scanned: 0, start: null as HarnessTime | null, end: null as HarnessTime | null, completedInARow: 0 };
  const scanLoad = () => {
    const lines = loadLog()?.lines ?? [];
    for (; load.scanned < lines.length; load.scanned++) {
      const { text, receivedAt } = lines[load.scanned]!;
      const line = parseLoadLine(text);
      if (line?.event === 'request') load.completedInARow = line.outcome === 'completed' ? load.completedInARow + 1 : 0;
      else if (line?.event === 'load-start') load.start = receivedAt;
      else if (line?.event === 'load-end') load.end = receivedAt;
    }
    return load;
  };
  const labUids = () => [...new Set(watches.evidence.podEvents.filter((e) => e.role === 'lab').map((e) => e.uid))];
  const goneUids = () => new Set(watches.evidence.podEvents.filter((e) => e.type === 'DELETED').map((e) => e.uid));

  const cleanup = await runPhases<RolloutPhase>(ctx, run, cleaner, async ({ onPhase }) => {
    await watches.start(name, podSelector);
    timeline.watchesEstablished = clock.now();
    if (watches.gaveUp) throw new TermlabError('API_UNREACHABLE', 'a rollout watch could not start');

    const service = await createService(cluster, namespace, renderService(ctx.template, scenario, renderOptions) as k8s.V1Service, { signal: ctx.signal });
    objects.service = { name, uid: service.metadata!.uid!, clusterIP: service.spec?.clusterIP ?? null, port: SERVICE_PORT, nodePort: service.spec?.ports?.[0]?.nodePort ?? null };
    cleaner.defer('delete service', async () => ((await deleteService(cluster, namespace, name, objects.service!.uid)) === 'gone' ? 'gone' : 'done'));

    const deployment = await createDeployment(cluster, namespace, renderDeployment(ctx.template, scenario, renderOptions) as k8s.V1Deployment, { signal: ctx.signal });
    objects.deployment = { name, uid: deployment.metadata!.uid! };
    template.before = { at: clock.now(), generation: deployment.metadata?.generation ?? null, containers: liveContainers(JSON.parse(JSON.stringify(deployment.spec?.template?.spec))) };
    cleaner.defer('wait for the lab pods to be gone', async () => {
      if (ctx.signal.aborted) return 'skipped';
      const ok = await watches.waitFor(() => { const gone = goneUids(); return labUids().every((u) => gone.has(u)); }, GONE_TIMEOUT_MS + scenario.terminationGracePeriodSeconds * 1000);
      if (!ok) throw new Error(`lab pods still there after ${GONE_TIMEOUT_MS / 1000 + scenario.terminationGracePeriodSeconds}s`);
      return 'done';
    });
    cleaner.defer('delete deployment', async () => ((await deleteDeployment(cluster, namespace, name, objects.deployment!.uid)) === 'gone' ? 'gone' : 'done'));

    onPhase('waiting for available');
    const rolledTo = (generation: number) => () => {
      const d = watches.deployment;
      const st = d?.status ?? {};
      return Boolean(d) && (st.observedGeneration ?? 0) >= generation && st.updatedReplicas === scenario.replicas && st.availableReplicas === scenario.replicas && st.replicas === scenario.replicas;
    };
    if (!(await watches.waitFor(rolledTo(deployment.metadata?.generation ?? 1), ctx.readyTimeoutMs, ctx.signal))) {
      throw new TermlabError('POD_NOT_READY', `deployment ${namespace}/${name} was not available within ${ctx.readyTimeoutMs / 1000}s`);
    }
    timeline.deploymentAvailable = clock.now();
    const sliceReady = () => (watches.evidence.sliceEvents.at(-1)?.endpoints.filter((e) => e.ready).length ?? 0) >= scenario.replicas;
    if (!(await watches.waitFor(sliceReady, ctx.readyTimeoutMs, ctx.signal))) throw new TermlabError('POD_NOT_READY', `the Service's EndpointSlice did not list ${scenario.replicas} ready endpoints within ${ctx.readyTimeoutMs / 1000}s`);
    await sleep(SERVICE_SETTLE_MS, undefined, { signal: ctx.signal });

    onPhase('load starting');
    const readyPod = [...watches.evidence.podEvents].reverse().find((e) => e.role === 'lab' && e.ready);
    const hostIP = readyPod ? (await readPod(cluster, namespace, readyPod.name))?.status?.hostIP : undefined;
    objects.target = ctx.simulated
      ? `http://${hostIP ?? '127.0.0.1'}:${objects.service.nodePort}`
      : `http://${objects.service.clusterIP}:${SERVICE_PORT}`;
    const loadBody = renderLoadPod(ctx.template, scenario, { ...renderOptions, target: objects.target });
    const loadPod = await createPod(cluster, namespace, loadBody as k8s.V1Pod, { signal: ctx.signal });
    objects.loadPod = { name: loadPod.metadata!.name!, uid: loadPod.metadata!.uid! };
    timeline.loadPodCreated = clock.now();
    ctx.pods?.created(objects.loadPod.name);
    cleaner.defer('delete load pod', async () => {
      const result = await deletePod(cluster, namespace, objects.loadPod!.name, objects.loadPod!.uid);
      ctx.pods?.gone(objects.loadPod!.name);
      return result === 'gone' ? 'gone' : 'done';
    });
    if (!(await watches.waitFor(() => scanLoad().start !== null, ctx.readyTimeoutMs, ctx.signal))) {
      throw new TermlabError('POD_NOT_READY', `the load pod ${objects.loadPod.name} did not start its load within ${ctx.readyTimeoutMs / 1000}s`);
    }
    // The change is timed from a second of steady success: until then the proxies may not route
    // to every endpoint yet (a real cluster's take unknown time), which is not the rollout's doing.
    const steady = () => scanLoad().completedInARow >= scenario.load.rate;
    if (!(await watches.waitFor(steady, ctx.readyTimeoutMs, ctx.signal))) {
      throw new TermlabError('POD_NOT_READY', `requests through the Service did not complete steadily for a second within ${ctx.readyTimeoutMs / 1000}s (target ${objects.target})`);
    }
    await sleep(scenario.changeAfterMs, undefined, { signal: ctx.signal });

    onPhase('rolling out');
    const patched = await replaceDeploymentTemplate(cluster, namespace, name, renderPodTemplate(ctx.template, scenario, scenario.to, 'to', renderOptions) as k8s.V1PodTemplateSpec, { signal: ctx.signal });
    timeline.templateChanged = clock.now();
    template.after = { at: timeline.templateChanged, generation: patched.metadata?.generation ?? null, containers: liveContainers(JSON.parse(JSON.stringify(patched.spec?.template?.spec))) };
    const oldUids = labUids();
    const rolloutLimit = scenario.load.durationMs + scenario.replicas * scenario.terminationGracePeriodSeconds * 1000 + ROLLOUT_MARGIN_MS;
    const complete = () => { const gone = goneUids(); return rolledTo(patched.metadata?.generation ?? 2)() && oldUids.every((u) => gone.has(u)); };
    if (!(await watches.waitFor(complete, rolloutLimit, ctx.signal))) throw new TermlabError('ROLLOUT_NOT_COMPLETE', `the rollout did not complete within ${Math.round(rolloutLimit / 1000)}s`, { limitMs: rolloutLimit });
    timeline.rolloutComplete = clock.now();

    onPhase('load finishing');
    // The load runs on a little past the rollout, then is stopped: its pod's TERM ends the sending,
    // what is in flight still ends and is logged, and its log ends with the load-end line.
    const loadEnded = () => scanLoad().end !== null && (loadLog()?.ended ?? false);
    if (!(await watches.waitFor(loadEnded, LOAD_TAIL_MS, ctx.signal)) && !ctx.signal.aborted) {
      await deletePod(cluster, namespace, objects.loadPod.name, objects.loadPod.uid, { signal: ctx.signal });
    }
    const loadLimit = scenario.load.durationMs + scenario.load.workMs + GONE_TIMEOUT_MS;
    if (!(await watches.waitFor(loadEnded, loadLimit, ctx.signal))) throw new TermlabError('LOAD_NOT_ENDED', `the load pod did not log the end of its load within ${Math.round(loadLimit / 1000)}s`, { limitMs: loadLimit });
    timeline.loadEnded = clock.now();
  }, {
    afterCleanup: async () => {
      const settle = new AbortController();
      await Promise.race([Promise.allSettled([...pendingReads]), sleep(READS_SETTLE_MS, undefined, { signal: settle.signal }).catch(() => {})]);
      settle.abort();
      watches.stop();
    },
  });
  return finishRollout({ run, scenario, objects, template, timeline, liveReads: liveReads.map(settledRead), cleanup }, watches, followers);
}

/** finish: every followed log as evidence (the load pod's apart), and the observation the runner writes. */
function finishRollout(parts: Omit<RolloutObservation, 'schemaVersion' | 'kind' | 'evidence'>, watches: RolloutWatches, followers: Map<string, { pod: string; follower: LogFollower }>): RolloutObservation {
  const logOf = (uid: string) => {
    const f = followers.get(uid)!;
    return { pod: f.pod, uid, lines: f.follower.lines, ended: f.follower.ended && f.follower.error === null, error: f.follower.error };
  };
  const loadUid = parts.objects.loadPod?.uid;
  const evidence = watches.evidence;
  evidence.podLogs = [...followers.keys()].filter((u) => u !== loadUid).map(logOf);
  evidence.loadLog = loadUid && followers.has(loadUid) ? logOf(loadUid) : null;
  return { schemaVersion: ROLLOUT_SCHEMA_VERSION, kind: ROLLOUT_KIND, ...parts, evidence };
}


/** A live read under way: its answer filled in when it comes. */
interface PendingRead { pod: string; uid: string; began: HarnessTime; after: string; result: LiveRead | null }

/** A read with no answer (failed, or not back by the end) is recorded as not found, at the time it began. */
function settledRead(r: PendingRead): LiveRead {
  return r.result ?? { pod: r.pod, at: r.began, after: { resourceVersion: r.after }, found: false, uid: null, resourceVersion: null, deletionTimestamp: null, terminationGracePeriodSeconds: null, templateHash: null, containers: [] };
}

/** The pod as the API held it while it terminated: found only when it is still the same pod (UID). */
function liveReadOf(pod: string, uid: string, after: string, at: HarnessTime, live: k8s.V1Pod | null): LiveRead {
  return {
    pod, at, after: { resourceVersion: after }, found: live !== null && live.metadata?.uid === uid, uid: live?.metadata?.uid ?? null, resourceVersion: live?.metadata?.resourceVersion ?? null,
    deletionTimestamp: apiTimeString(live?.metadata?.deletionTimestamp), terminationGracePeriodSeconds: live?.spec?.terminationGracePeriodSeconds ?? null,
    templateHash: live?.metadata?.labels?.['pod-template-hash'] ?? null,
    containers: live ? liveContainers(JSON.parse(JSON.stringify(live.spec))) : [],
  };
}
