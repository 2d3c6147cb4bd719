// A retry scenario's own phases (issue 27), beside the one pod the scenario deletes: the ledger pod
// behind its Service, the Service both lab pods stand behind and the standby replica (created before
// the deleted pod, so both lab pods are given the ledger's address), the client's retries routed by
// that Service's EndpointSlices, and at the end the ledger's and the standby's logs made whole.
// Everything made here is registered with the scenario's cleaner at once.
//
// A retry is routed as kube-proxy routes a new connection (routeCandidates): to a ready endpoint picked
// at random; with none ready, to a serving terminating one. The harness runs outside the cluster and reaches pods over port-forwards, so it
// picks from the slices as the API serves them when the retry is due (a proxy's own lag is the rollout
// lab's subject), and sends to the pod it picked.
import type * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import {
  createService,
  deletePod,
  deleteService,
  listEndpointSlices,
  openPortForward,
  readPod,
  type PortForwardHandle,
} from '../kube/index.ts';
import type { HarnessTime } from '../observation/schema.ts';
import { type Attempt, type Retries, ROUTE_UNREAD, type Route, routeCandidates } from '../observation/retries.ts';
import { createPodWithinQuota } from '../safety/quota.ts';
import { renderLedger, renderLedgerService, renderRetryService, renderStandby } from '../scenario/render-retry.ts';
import { labPort } from '../scenario/render.ts';
import { SERVICE_PORT } from '../scenario/render-rollout.ts';
import type { RetryOn, Scenario } from '../scenario/schema.ts';
import { parseLedgerLine } from '../../server/contract-schemas.ts';
import { IDEMPOTENCY_HEADER } from '../../server/contract.ts';
import type { Cleaner } from './cleaner.ts';
import { LogFollower } from './logs.ts';
import { newRequestRecord, type RequestRecord, sendWork } from './request.ts';
import type { ScenarioContext } from './phases.ts';
import { allTerminated, hasTerminated, isGone, isReady, PodWatch } from './watch.ts';

/** Real proxies program a new Service's rules in about a second (measure:proxy): as the rollout lab waits. */
const PROXY_SETTLE_MS = 2000;
/** How long a side pod may take to end after its delete (no work in flight: it exits at TERM). */
const SIDE_POD_END_MS = 30_000;
const LOG_END_MS = 5_000;

interface SidePod {
  name: string;
  uid: string;
  watch: PodWatch;
  logs: LogFollower;
}

export interface RetryLab {
  ledgerUrl: string;
  ledger: SidePod & { service: NonNullable<Retries['ledger']>['service'] };
  standby: SidePod & { base: string | null; forward: PortForwardHandle<HarnessTime> | null };
  /** The Service both lab pods stand behind: the retries' way in. */
  service: { name: string; uid: string };
  attempts: RequestRecord[];
  targets: Attempt['target'][];
  keys: (string | null)[];
  routes: (Route | null)[];
}

/** The deleted pod as a retry may reach it: its UID and the address its request went to. */
export interface DeletedPod {
  uid: string;
  base: string;
}

/** The key every attempt of one request carries, when the scenario sends one. */
export const idempotencyKeyOf = (scenario: Scenario, requestId: string): string | null =>
  scenario.retry?.idempotencyKey ? `key-${requestId}` : null;
export const keyHeaders = (key: string | null): Record<string, string> => (key ? { [IDEMPOTENCY_HEADER]: key } : {});

/** Where a pod's port is reached without a port-forward: its node's published port (the simulated cluster), else its own IP. */
export function directBase(pod: k8s.V1Pod, port: number): string {
  const hostPort = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]
    .flatMap((c) => c.ports ?? [])
    .find((p) => p.containerPort === port)?.hostPort;
  return hostPort ? `http://${pod.status?.hostIP}:${hostPort}` : `http://${pod.status?.podIP}:${port}`;
}

async function createSidePod(ctx: ScenarioContext, body: k8s.V1Pod, cleaner: Cleaner): Promise<SidePod> {
  const pod = await createPodWithinQuota(ctx.cluster, ctx.namespace, body, {
    signal: ctx.signal,
    maxWaitMs: ctx.quotaWaitMs,
    onWait: (text) => ctx.onPhase('creating', text),
  });
  const name = body.metadata!.name!;
  const uid = pod.metadata!.uid!;
  ctx.pods?.created(name);
  const watch = new PodWatch(ctx.cluster, ctx.namespace, name, uid, pod.metadata!.resourceVersion!, ctx.clock);
  cleaner.defer(`wait for ${name} gone`, async () => {
    if (ctx.signal.aborted) return 'skipped';
    const gone = await watch.waitFor(isGone, SIDE_POD_END_MS);
    if (!gone) {
      const read = await watch.read('final');
      if (!read || read.found) throw new Error(`${name} was not seen gone within ${SIDE_POD_END_MS / 1000}s`);
    }
    ctx.pods?.gone(name);
    watch.stop();
    return 'done';
  });
  cleaner.defer(`delete pod ${name}`, async () =>
    (await deletePod(ctx.cluster, ctx.namespace, name, uid)) === 'gone' ? 'gone' : 'done',
  );
  await watch.start();
  return { name, uid, watch, logs: new LogFollower() };
}

async function waitReady(ctx: ScenarioContext, pod: SidePod, what: string): Promise<void> {
  // A container that ended (an image without the ledger mode exits 2 at once) will never be Ready: say so now.
  const seen = await pod.watch.waitFor(
    (s) => s.pod !== null && (isReady(s.pod) || hasTerminated(s.pod)),
    ctx.readyTimeoutMs,
    ctx.signal,
  );
  if (seen?.pod && isReady(seen.pod)) return;
  const ended = seen?.pod?.status?.containerStatuses?.find((c) => c.state?.terminated)?.state?.terminated;
  const why = ended
    ? `: its container exited ${ended.exitCode} (${ended.reason ?? 'no reason'}); does the image have the ledger mode (server/ledger.ts)?`
    : ` within ${ctx.readyTimeoutMs / 1000}s`;
  throw new TermlabError('POD_NOT_READY', `the ${what} pod ${ctx.namespace}/${pod.name} was not Ready${why}`);
}

/** create: the ledger's Service and pod, then (once the ledger is Ready) the standby replica. */
export async function startRetryLab(
  ctx: ScenarioContext,
  scenario: Scenario,
  podName: string,
  cleaner: Cleaner,
): Promise<RetryLab> {
  const options = {
    podName,
    owner: ctx.owner,
    identity: ctx.identity,
    runId: ctx.runId,
    image: ctx.image,
    env: ctx.env,
  };
  const ledgerBody = renderLedger(ctx.template, scenario, options);
  const serviceBody = renderLedgerService(ctx.template, scenario, ledgerBody) as k8s.V1Service;
  const created = await createService(ctx.cluster, ctx.namespace, serviceBody, { signal: ctx.signal });
  const serviceName = serviceBody.metadata!.name!;
  const serviceUid = created.metadata!.uid!;
  cleaner.defer("delete the ledger's service", async () =>
    (await deleteService(ctx.cluster, ctx.namespace, serviceName, serviceUid)) === 'gone' ? 'gone' : 'done',
  );
  const service = {
    name: serviceName,
    uid: serviceUid,
    clusterIP: created.spec?.clusterIP ?? null,
    nodePort: created.spec?.ports?.[0]?.nodePort ?? null,
  };
  const ledger = await createSidePod(ctx, ledgerBody, cleaner);
  await waitReady(ctx, ledger, 'ledger');
  await ledger.logs.start(ctx.cluster, ctx.namespace, ledger.name, ledgerBody.spec!.containers[0]!.name, ctx.clock);
  cleaner.defer("stop the ledger's log follow", async () => {
    ledger.logs.stop();
    return 'skipped';
  });
  const hostIP = ctx.simulated ? (await readPod(ctx.cluster, ctx.namespace, ledger.name))?.status?.hostIP : undefined;
  const ledgerUrl = ctx.simulated
    ? `http://${hostIP ?? '127.0.0.1'}:${service.nodePort}`
    : `http://${service.clusterIP}:${SERVICE_PORT}`;
  if (!ctx.simulated) await sleep(PROXY_SETTLE_MS, undefined, { signal: ctx.signal });
  const standbyBody = renderStandby(ctx.template, scenario, { ...options, ledgerUrl });
  const retryServiceBody = renderRetryService(ctx.template, scenario, standbyBody) as k8s.V1Service;
  const retryService = await createService(ctx.cluster, ctx.namespace, retryServiceBody, { signal: ctx.signal });
  const retryServiceRef = { name: retryServiceBody.metadata!.name!, uid: retryService.metadata!.uid! };
  cleaner.defer('delete the retry service', async () =>
    (await deleteService(ctx.cluster, ctx.namespace, retryServiceRef.name, retryServiceRef.uid)) === 'gone'
      ? 'gone'
      : 'done',
  );
  const standby = await createSidePod(ctx, standbyBody, cleaner);
  return {
    ledgerUrl,
    ledger: { ...ledger, service },
    standby: { ...standby, base: null, forward: null },
    service: retryServiceRef,
    attempts: [],
    targets: [],
    keys: [],
    routes: [],
  };
}

/** ready and observe for the standby: Ready, its log followed, and its address (a forward of its own, or direct). */
export async function readyStandby(ctx: ScenarioContext, lab: RetryLab, cleaner: Cleaner): Promise<void> {
  const { standby } = lab;
  await waitReady(ctx, standby, 'standby');
  const port = labPort(ctx.template);
  await standby.logs.start(ctx.cluster, ctx.namespace, standby.name, ctx.template.spec.containers[0].name, ctx.clock);
  cleaner.defer("stop the standby's log follow", async () => {
    standby.logs.stop();
    return 'skipped';
  });
  if (ctx.transport === 'portforward') {
    const forward = (standby.forward = await openPortForward(ctx.cluster, ctx.namespace, standby.name, port, () =>
      ctx.clock.now(),
    ));
    cleaner.defer("close the standby's port-forward", async () => {
      await forward.close();
      return 'skipped';
    });
    standby.base = `http://127.0.0.1:${forward.localPort}`;
  } else {
    const pod = await readPod(ctx.cluster, ctx.namespace, standby.name, { signal: ctx.signal });
    if (!pod) throw new TermlabError('POD_GONE_EARLY', `the standby pod ${standby.name} is gone`);
    standby.base = directBase(pod, port);
  }
}

/** Which of the policy's conditions an attempt's end meets, if any. */
export function retryReason(r: Pick<RequestRecord, 'outcome' | 'status'>): RetryOn | null {
  if (r.outcome === 'cut') return 'cut';
  if (r.outcome === 'rejected') return 'rejected';
  if (r.status !== null && r.status >= 500 && r.status !== 503) return '5xx';
  return null;
}

/** The retry's route: the Service's slices read now, and an endpoint picked from them at random. */
async function routeRetry(ctx: ScenarioContext, lab: RetryLab, signal: AbortSignal): Promise<Route> {
  const { slices, endpoints } = await listEndpointSlices(ctx.cluster, ctx.namespace, lab.service.name, { signal });
  const read = ctx.clock.now();
  const candidates = routeCandidates(endpoints).filter((e) => e.uid !== null);
  const chosen = candidates.length ? candidates[Math.floor(Math.random() * candidates.length)]!.uid : null;
  return { read, slices, endpoints, chosen };
}

/**
 * The client's retries: after each attempt that ends as the policy retries on, backoffMs, then the same
 * request (the same key, its own id) through the Service to the pod its slices route it to, until one
 * does not or the attempts run out. With no endpoint to take it, the attempt is recorded unsent.
 */
export async function runRetries(
  ctx: ScenarioContext,
  scenario: Scenario,
  lab: RetryLab,
  deleted: DeletedPod,
  first: RequestRecord,
  firstDone: Promise<RequestRecord>,
  signal: AbortSignal,
): Promise<void> {
  const policy = scenario.retry!;
  const key = idempotencyKeyOf(scenario, first.id);
  lab.attempts.push(first);
  lab.targets.push('deleted');
  lab.keys.push(key);
  lab.routes.push(null);
  let last = await firstDone;
  for (let n = 2; n <= policy.attempts; n++) {
    const reason = retryReason(last);
    if (!reason || !policy.on.includes(reason)) return;
    // Ctrl-C during the backoff or the route's read: no retry is sent, and the run ends as interrupted with what it recorded.
    try {
      await sleep(policy.backoffMs, undefined, { signal });
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    const record = newRequestRecord(`${first.id}-a${n}`);
    let route: Route;
    try {
      route = await routeRetry(ctx, lab, signal);
    } catch (error) {
      if (ctx.signal.aborted) return;
      // The API lost past the harness's patience, or the run gave up waiting on it: the retry is recorded
      // unsent, its route unread (graded inconclusive, never as the app's nor as a missing attempt).
      record.errorCode = ROUTE_UNREAD;
      lab.attempts.push(record);
      lab.targets.push('standby');
      lab.keys.push(key);
      lab.routes.push(null);
      if (signal.aborted) return;
      throw error;
    }
    // Ctrl-C while the slices were read: no retry is sent.
    if (ctx.signal.aborted) return;
    const target = route.chosen === deleted.uid ? 'deleted' : 'standby';
    lab.attempts.push(record);
    lab.targets.push(target);
    lab.keys.push(key);
    lab.routes.push(route);
    if (route.chosen === null || (route.chosen !== deleted.uid && route.chosen !== lab.standby.uid)) {
      record.errorCode = route.chosen === null ? 'NO_ENDPOINTS' : 'FOREIGN_ENDPOINT';
      return;
    }
    last = await sendWork(
      target === 'deleted' ? deleted.base : lab.standby.base!,
      scenario.workMs,
      record,
      ctx.clock,
      () => {},
      signal,
      keyHeaders(key),
    );
  }
}

/** collect: once every attempt has ended, the side pods deleted and their logs made whole (the ledger's records). */
export async function collectRetryLab(ctx: ScenarioContext, lab: RetryLab): Promise<void> {
  for (const pod of [lab.standby, lab.ledger]) {
    await deletePod(ctx.cluster, ctx.namespace, pod.name, pod.uid);
    await pod.watch.waitFor((s) => (s.pod !== null && allTerminated(s.pod)) || isGone(s), SIDE_POD_END_MS, ctx.signal);
    await pod.logs.waitForEnd(LOG_END_MS);
    if (pod.logs.error !== null || !pod.logs.ended) {
      try {
        await pod.logs.recover();
      } catch {
        /* the stream's own error stays on record */
      }
    }
  }
}

/** The ledger's count from its own lines: applied records, and answers already-applied. */
function ledgerCountOf(lines: readonly { text: string }[]): Retries['ledgerCount'] {
  const count = { applied: 0, alreadyApplied: 0 };
  for (const line of lines) {
    let json: unknown;
    try {
      json = JSON.parse(line.text);
    } catch {
      continue;
    }
    const parsed = parseLedgerLine(json);
    if (parsed.kind !== 'event') continue;
    if (parsed.event === 'applied') count.applied++;
    if (parsed.event === 'already-applied') count.alreadyApplied++;
  }
  return count;
}

const toAttempt = (
  r: RequestRecord,
  n: number,
  target: Attempt['target'],
  key: string | null,
  route: Route | null,
): Attempt => ({
  n,
  id: r.id,
  target,
  key,
  route,
  sent: r.sent,
  accepted: r.accepted,
  ended: r.ended,
  status: r.status,
  bytes: r.bytes,
  sha256: r.sha256,
  done: r.done,
  doneSeen: r.doneSeen,
  podUid: r.podUid,
  errorCode: r.errorCode,
  outcome: r.outcome,
});

/** The observation's retries part; attempt 1 as the observation's request says it ended. */
export function retriesRecord(
  lab: RetryLab,
  request: { outcome: Attempt['outcome']; errorCode: string | null },
): Retries {
  const side = (p: SidePod) => ({
    name: p.name,
    uid: p.uid,
    logLines: p.logs.lines,
    logEndedEarly: p.logs.error !== null || !p.logs.ended,
  });
  const attempts = lab.attempts.map((r, i) =>
    toAttempt(r, i + 1, lab.targets[i]!, lab.keys[i] ?? null, lab.routes[i] ?? null),
  );
  if (attempts[0]) Object.assign(attempts[0], { outcome: request.outcome, errorCode: request.errorCode });
  return {
    standby: side(lab.standby),
    ledger: { ...side(lab.ledger), url: lab.ledgerUrl, service: lab.ledger.service },
    service: lab.service,
    attempts,
    ledgerCount: ledgerCountOf(lab.ledger.logs.lines),
  };
}
