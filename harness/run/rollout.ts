// One rollout scenario as phases: watch → service → deployment → available → load → change the
// template → rolled out → load ended → clean. The four watches start before anything is created;
// each terminating pod is read live the moment its deletion is seen; every pod's log is followed.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import {
  createDeployment,
  createPod,
  createService,
  deleteDeployment,
  deletePod,
  deleteService,
  readPod,
  replaceDeploymentTemplate,
} from '../kube/index.ts';
import { ROLLOUT_KIND, ROLLOUT_SCHEMA_VERSION, type RolloutObservation } from '../observation/rollout.ts';
import type { HarnessTime } from '../observation/schema.ts';
import {
  labSelector,
  renderDeployment,
  renderLoadPod,
  renderPodTemplate,
  type RolloutRenderOptions,
  renderService,
  SERVICE_PORT,
} from '../scenario/render-rollout.ts';
import { type RolloutScenario, rolloutDeadlineSeconds } from '../scenario/rollout.ts';
import { Cleaner } from './cleaner.ts';
import { newRun, type RolloutPhase, runPhases } from './phases.ts';
import { LiveReads } from './live-reads.ts';
import { LogFollower } from './logs.ts';
import { liveContainers, RolloutWatches } from './rollout-watch.ts';
import { parseLoadLine } from '../../server/contract-schemas.ts';
import type { ScenarioContext } from './scenario.ts';

/** Beyond the load and the pods' grace: how long the rollout may take to complete. */
const ROLLOUT_MARGIN_MS = 60_000;
/** After the lab pods are gone in cleanup, or the load pod's end: how long to wait for it. */
const GONE_TIMEOUT_MS = 60_000;
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

type ServiceRecord = NonNullable<RolloutObservation['objects']['service']>;
type PodRecord = NonNullable<RolloutObservation['objects']['loadPod']>;

/**
 * What a scenario kind built on a rollout (the edge's, run/edge.ts) adds: objects after the Service, the
 * pods' and the load's settings, and where the load goes. Each hook registers its own undo with the cleaner.
 */
export interface RolloutExtension {
  /** expiresAt: when what it adds may be reaped without a record of the run (the rollout's own expiry). */
  afterService?(r: { name: string; cleaner: Cleaner; service: ServiceRecord; expiresAt?: number }): Promise<void>;
  podTemplate?(template: Raw): Raw;
  loadPod?(pod: Raw): Raw;
  /** The load's base URL, instead of the Service's. */
  target?(): Promise<string>;
}

/** What one rollout holds while it runs: its names, the record each phase fills in, and what it follows. */
interface Rollout {
  ext: RolloutExtension;
  ctx: ScenarioContext;
  scenario: RolloutScenario;
  name: string;
  renderOptions: RolloutRenderOptions;
  podSelector: string;
  run: RolloutObservation['run'];
  watches: RolloutWatches;
  cleaner: Cleaner;
  objects: RolloutObservation['objects'];
  template: RolloutObservation['template'];
  timeline: RolloutObservation['timeline'];
  /** Each terminating lab pod read live the moment its deletion is seen. */
  liveReads: LiveReads;
  followers: Map<string, { pod: string; follower: LogFollower }>;
  /** What the load's log has said so far, scanned incrementally: at 200 lines a second a rescan per look would cost. */
  load: { scanned: number; start: HarnessTime | null; end: HarnessTime | null; completedInARow: number };
}

/** Runs one rollout scenario and returns its observation; failures are recorded in it, never thrown. */
export async function runRollout(
  ctx: ScenarioContext,
  scenario: RolloutScenario,
  ext: RolloutExtension = {},
): Promise<RolloutObservation> {
  const r = planRollout(ctx, scenario, ext);
  followEveryPod(r);
  const cleanup = await runPhases<RolloutPhase>(
    ctx,
    r.run,
    r.cleaner,
    async ({ onPhase }) => {
      await watchPhase(r);
      const created = await createPhase(r);
      onPhase('waiting for available');
      await availablePhase(r, created.generation);
      onPhase('load starting');
      const loadPod = await loadPhase(r, created.service);
      onPhase('rolling out');
      await rolloutPhase(r);
      onPhase('load finishing');
      await loadEndPhase(r, loadPod);
    },
    { afterCleanup: () => settleReads(r) },
  );
  return finishRollout(r, cleanup);
}

/** plan: the names and selectors, the empty record, the watches and the cleaner; nothing touches the cluster yet. */
function planRollout(ctx: ScenarioContext, scenario: RolloutScenario, ext: RolloutExtension): Rollout {
  const name = rolloutNameFor(scenario, ctx.runId);
  const renderOptions = {
    name,
    owner: ctx.owner,
    identity: ctx.identity,
    runId: ctx.runId,
    image: ctx.image,
    env: ctx.env,
    expiresAt: Date.now() + rolloutDeadlineSeconds(scenario) * 1000,
  };
  const selector = Object.entries(labSelector(scenario, renderOptions))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return {
    ext,
    ctx,
    scenario,
    name,
    renderOptions,
    podSelector: selector
      .split(',')
      .filter((s) => !s.startsWith('termlab.io/role='))
      .join(','),
    run: newRun(ctx, 'direct'),
    watches: new RolloutWatches(ctx.cluster, ctx.namespace, ctx.clock),
    cleaner: new Cleaner(ctx.clock),
    objects: { deployment: null, service: null, loadPod: null, target: null },
    template: { before: null, after: null },
    timeline: {
      watchesEstablished: null,
      deploymentAvailable: null,
      loadPodCreated: null,
      templateChanged: null,
      rolloutComplete: null,
      loadEnded: null,
    },
    liveReads: new LiveReads(ctx),
    followers: new Map(),
    load: { scanned: 0, start: null, end: null, completedInARow: 0 },
  };
}

/** Every pod: its log followed once its container runs; a lab pod read live at its deletion. */
function followEveryPod(r: Rollout): void {
  const {
    ctx: { cluster, namespace, clock },
    watches,
    cleaner,
    followers,
  } = r;
  // The load's lines are read as they come (waiting phases look at them), once each.
  const poker = setInterval(() => watches.poke(), LOG_POKE_MS);
  cleaner.defer('stop looking at the logs', async () => {
    clearInterval(poker);
    return 'skipped';
  });
  watches.onPod = (_type, pod: Raw, event) => {
    const uid = event.uid;
    if (
      !followers.has(uid) &&
      event.containers.some((c) => c.state === 'running' || c.state === 'terminated') &&
      event.type !== 'DELETED'
    ) {
      const follower = new LogFollower();
      followers.set(uid, { pod: event.name, follower });
      // The logs of old pods end with their containers; the new pods' are cut before the deletions.
      cleaner.defer(`stop the log follow of ${event.name}`, async () => {
        if (!follower.ended) follower.stop();
        return 'skipped';
      });
      // A stream's end wakes the waiters at once; new lines are looked at by the run's one poker.
      void follower
        .start(cluster, namespace, event.name, pod.spec?.containers?.[0]?.name ?? 'lab', clock)
        .then(
          () => follower.waitForEnd(rolloutDeadlineSeconds(r.scenario) * 1000),
          () => false,
        )
        .finally(() => watches.poke());
    }
    if (event.role === 'lab' && event.deletionTimestamp)
      r.liveReads.start(event.name, uid, event.resourceVersion, { at: event.receivedAt, pod });
  };
}

const loadLog = (r: Rollout) => (r.objects.loadPod ? (r.followers.get(r.objects.loadPod.uid)?.follower ?? null) : null);

function scanLoad(r: Rollout): Rollout['load'] {
  const { load } = r;
  const lines = loadLog(r)?.lines ?? [];
  for (; load.scanned < lines.length; load.scanned++) {
    const { text, receivedAt } = lines[load.scanned]!;
    const line = parseLoadLine(text);
    if (line?.event === 'request') load.completedInARow = line.outcome === 'completed' ? load.completedInARow + 1 : 0;
    else if (line?.event === 'load-start') load.start = receivedAt;
    else if (line?.event === 'load-end') load.end = receivedAt;
  }
  return load;
}

const labUids = (r: Rollout) => [
  ...new Set(r.watches.evidence.podEvents.filter((e) => e.role === 'lab').map((e) => e.uid)),
];
const goneUids = (r: Rollout) =>
  new Set(r.watches.evidence.podEvents.filter((e) => e.type === 'DELETED').map((e) => e.uid));

/** The Deployment, as watched, at this generation with every replica updated and available. */
const rolledTo = (r: Rollout, generation: number) => () => {
  const d = r.watches.deployment;
  const st = d?.status ?? {};
  const { replicas } = r.scenario;
  return (
    Boolean(d) &&
    (st.observedGeneration ?? 0) >= generation &&
    st.updatedReplicas === replicas &&
    st.availableReplicas === replicas &&
    st.replicas === replicas
  );
};

/** watch: the four watches, started before anything is created. */
async function watchPhase(r: Rollout): Promise<void> {
  await r.watches.start(r.name, r.podSelector);
  r.timeline.watchesEstablished = r.ctx.clock.now();
  if (r.watches.gaveUp) throw new TermlabError('API_UNREACHABLE', 'a rollout watch could not start');
}

/** create: the Service and the Deployment, each with how to undo it registered the moment it exists. */
async function createPhase(r: Rollout): Promise<{ service: ServiceRecord; generation: number }> {
  const { ctx, scenario, name, renderOptions, objects, cleaner, watches } = r;
  const { cluster, namespace, clock } = ctx;
  const service = await createService(
    cluster,
    namespace,
    renderService(ctx.template, scenario, renderOptions) as k8s.V1Service,
    { signal: ctx.signal },
  );
  const serviceRecord = (objects.service = {
    name,
    uid: service.metadata!.uid!,
    clusterIP: service.spec?.clusterIP ?? null,
    port: SERVICE_PORT,
    nodePort: service.spec?.ports?.[0]?.nodePort ?? null,
  });
  cleaner.defer('delete service', async () =>
    (await deleteService(cluster, namespace, name, objects.service!.uid)) === 'gone' ? 'gone' : 'done',
  );
  await r.ext.afterService?.({ name, cleaner, service: serviceRecord, expiresAt: r.renderOptions.expiresAt });

  const rendered = renderDeployment(ctx.template, scenario, renderOptions);
  if (r.ext.podTemplate) rendered.spec.template = r.ext.podTemplate(rendered.spec.template);

  const deployment = await createDeployment(cluster, namespace, rendered as k8s.V1Deployment, { signal: ctx.signal });
  objects.deployment = { name, uid: deployment.metadata!.uid! };
  r.template.before = {
    at: clock.now(),
    generation: deployment.metadata?.generation ?? null,
    containers: liveContainers(JSON.parse(JSON.stringify(deployment.spec?.template?.spec))),
  };
  cleaner.defer('wait for the lab pods to be gone', async () => {
    if (ctx.signal.aborted) return 'skipped';
    const ok = await watches.waitFor(
      () => {
        const gone = goneUids(r);
        return labUids(r).every((u) => gone.has(u));
      },
      GONE_TIMEOUT_MS + scenario.terminationGracePeriodSeconds * 1000,
    );
    if (!ok)
      throw new Error(`lab pods still there after ${GONE_TIMEOUT_MS / 1000 + scenario.terminationGracePeriodSeconds}s`);
    return 'done';
  });
  cleaner.defer('delete deployment', async () =>
    (await deleteDeployment(cluster, namespace, name, objects.deployment!.uid)) === 'gone' ? 'gone' : 'done',
  );
  return { service: serviceRecord, generation: deployment.metadata?.generation ?? 1 };
}

/** available: every replica available, the EndpointSlice listing them ready, then time for the proxies. */
async function availablePhase(r: Rollout, generation: number): Promise<void> {
  const { ctx, scenario, name, watches } = r;
  if (!(await watches.waitFor(rolledTo(r, generation), ctx.readyTimeoutMs, ctx.signal))) {
    throw new TermlabError(
      'POD_NOT_READY',
      `deployment ${ctx.namespace}/${name} was not available within ${ctx.readyTimeoutMs / 1000}s`,
    );
  }
  r.timeline.deploymentAvailable = ctx.clock.now();
  const sliceReady = () =>
    (watches.evidence.sliceEvents.at(-1)?.endpoints.filter((e) => e.ready).length ?? 0) >= scenario.replicas;
  if (!(await watches.waitFor(sliceReady, ctx.readyTimeoutMs, ctx.signal)))
    throw new TermlabError(
      'POD_NOT_READY',
      `the Service's EndpointSlice did not list ${scenario.replicas} ready endpoints within ${ctx.readyTimeoutMs / 1000}s`,
    );
  await sleep(SERVICE_SETTLE_MS, undefined, { signal: ctx.signal });
}

/** load: the load pod aimed at the Service, until a second of steady success, then changeAfterMs. */
async function loadPhase(r: Rollout, service: ServiceRecord): Promise<PodRecord> {
  const { ctx, scenario, objects, watches } = r;
  const { cluster, namespace, clock } = ctx;
  const readyPod = [...watches.evidence.podEvents].reverse().find((e) => e.role === 'lab' && e.ready);
  const hostIP = readyPod ? (await readPod(cluster, namespace, readyPod.name))?.status?.hostIP : undefined;
  const target = (objects.target = r.ext.target
    ? await r.ext.target()
    : ctx.simulated
      ? `http://${hostIP ?? '127.0.0.1'}:${service.nodePort}`
      : `http://${service.clusterIP}:${SERVICE_PORT}`);
  const rendered = renderLoadPod(ctx.template, scenario, { ...r.renderOptions, target });
  const loadBody = r.ext.loadPod ? r.ext.loadPod(rendered) : rendered;
  const created = await createPod(cluster, namespace, loadBody as k8s.V1Pod, { signal: ctx.signal });
  const loadPod = (objects.loadPod = { name: created.metadata!.name!, uid: created.metadata!.uid! });
  r.timeline.loadPodCreated = clock.now();
  ctx.pods?.created(loadPod.name);
  r.cleaner.defer('delete load pod', async () => {
    const result = await deletePod(cluster, namespace, objects.loadPod!.name, objects.loadPod!.uid);
    ctx.pods?.gone(objects.loadPod!.name);
    return result === 'gone' ? 'gone' : 'done';
  });
  if (!(await watches.waitFor(() => scanLoad(r).start !== null, ctx.readyTimeoutMs, ctx.signal))) {
    throw new TermlabError(
      'POD_NOT_READY',
      `the load pod ${loadPod.name} did not start its load within ${ctx.readyTimeoutMs / 1000}s`,
    );
  }
  // The change is timed from a second of steady success: until then the proxies may not route
  // to every endpoint yet (a real cluster's take unknown time), which is not the rollout's doing.
  const steady = () => scanLoad(r).completedInARow >= scenario.load.rate;
  if (!(await watches.waitFor(steady, ctx.readyTimeoutMs, ctx.signal))) {
    throw new TermlabError(
      'POD_NOT_READY',
      `requests through the Service did not complete steadily for a second within ${ctx.readyTimeoutMs / 1000}s (target ${target})`,
    );
  }
  await sleep(scenario.changeAfterMs, undefined, { signal: ctx.signal });
  return loadPod;
}

/** roll out: the new template, until every replica is new and available and every old pod is gone. */
async function rolloutPhase(r: Rollout): Promise<void> {
  const { ctx, scenario, name, timeline, watches } = r;
  const next = renderPodTemplate(ctx.template, scenario, scenario.to, 'to', r.renderOptions);
  const patched = await replaceDeploymentTemplate(
    ctx.cluster,
    ctx.namespace,
    name,
    (r.ext.podTemplate ? r.ext.podTemplate(next) : next) as k8s.V1PodTemplateSpec,
    { signal: ctx.signal },
  );
  timeline.templateChanged = ctx.clock.now();
  r.template.after = {
    at: timeline.templateChanged,
    generation: patched.metadata?.generation ?? null,
    containers: liveContainers(JSON.parse(JSON.stringify(patched.spec?.template?.spec))),
  };
  const oldUids = labUids(r);
  const rolloutLimit =
    scenario.load.durationMs + scenario.replicas * scenario.terminationGracePeriodSeconds * 1000 + ROLLOUT_MARGIN_MS;
  const complete = () => {
    const gone = goneUids(r);
    return rolledTo(r, patched.metadata?.generation ?? 2)() && oldUids.every((u) => gone.has(u));
  };
  if (!(await watches.waitFor(complete, rolloutLimit, ctx.signal)))
    throw new TermlabError(
      'ROLLOUT_NOT_COMPLETE',
      `the rollout did not complete within ${Math.round(rolloutLimit / 1000)}s`,
      { limitMs: rolloutLimit },
    );
  timeline.rolloutComplete = ctx.clock.now();
}

/**
 * load end: the load runs on a little past the rollout, then is stopped: its pod's TERM ends the
 * sending, what is in flight still ends and is logged, and its log ends with the load-end line.
 */
async function loadEndPhase(r: Rollout, loadPod: PodRecord): Promise<void> {
  const { ctx, scenario, watches } = r;
  const loadEnded = () => scanLoad(r).end !== null && (loadLog(r)?.ended ?? false);
  if (!(await watches.waitFor(loadEnded, LOAD_TAIL_MS, ctx.signal)) && !ctx.signal.aborted) {
    await deletePod(ctx.cluster, ctx.namespace, loadPod.name, loadPod.uid, { signal: ctx.signal });
  }
  const loadLimit = scenario.load.durationMs + scenario.load.workMs + GONE_TIMEOUT_MS;
  if (!(await watches.waitFor(loadEnded, loadLimit, ctx.signal)))
    throw new TermlabError(
      'LOAD_NOT_ENDED',
      `the load pod did not log the end of its load within ${Math.round(loadLimit / 1000)}s`,
      { limitMs: loadLimit },
    );
  r.timeline.loadEnded = ctx.clock.now();
}

/** After cleanup: the live reads still under way get a little while to answer; then the watches stop. */
async function settleReads(r: Rollout): Promise<void> {
  await r.liveReads.settle();
  r.watches.stop();
}

/** finish: every followed log as evidence (the load pod's apart), and the observation the runner writes. */
function finishRollout(r: Rollout, cleanup: RolloutObservation['cleanup']): RolloutObservation {
  const { followers, watches } = r;
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
  const loadUid = r.objects.loadPod?.uid;
  const evidence = watches.evidence;
  evidence.podLogs = [...followers.keys()].filter((u) => u !== loadUid).map(logOf);
  evidence.loadLog = loadUid && followers.has(loadUid) ? logOf(loadUid) : null;
  const { run, scenario, objects, template, timeline } = r;
  return {
    schemaVersion: ROLLOUT_SCHEMA_VERSION,
    kind: ROLLOUT_KIND,
    run,
    scenario,
    objects,
    template,
    timeline,
    liveReads: r.liveReads.settled(),
    cleanup,
    evidence,
  };
}
