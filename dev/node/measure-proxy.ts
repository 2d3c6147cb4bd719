// npm run measure:proxy [rounds] — with the node up (npm run cluster:up): how long after an EndpointSlice says
// a pod is terminating do new connections through a Service stop reaching it (kube-proxy, iptables mode)?
// The simulated cluster's service proxy takes its default propagation delay (proxySyncDelayMs) from this.
//
// Method (docs/ci-node.md, "Endpoint propagation delay"): a Deployment of the lab server (3 replicas, preStop `lab-hook sleep`, so a
// terminating pod keeps serving) behind a NodePort Service; the host opens one new connection after another
// to <node IP>:<nodePort>, each answer naming its pod (x-pod-uid). delay = start of the last new connection
// that reached the pod − arrival here of the EndpointSlice event that marked it not ready; one clock (this
// host's). Two situations: a pod deleted after a quiet spell (with keep-alive connections pinned to it, to
// see whether they follow the rules), and the old pods of a rolling update, whose changes come in a burst.
import { appendFileSync, existsSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool, wholeNumber } from '../entry.ts';
import { labTemplate } from './lab-template.ts';
import { CONTEXT, NODE_IP, paths } from './layout.ts';
import { proxySyncs as syncsIn } from './proxy-log.ts';

const proxySyncs = () => syncsIn(join(paths.logs, 'kube-proxy.log'));

const NAMESPACE = 'default';
const NAME = 'termlab-measure-proxy';
const LABELS = {
  'app.kubernetes.io/name': NAME,
  'app.kubernetes.io/managed-by': 'termlab',
  'termlab.io/owner': 'measure-proxy',
};
const SELECTOR = Object.entries(LABELS)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');
const REPLICAS = 3;
/** The deleted pod serves this long before TERM: longer than any delay expected, so the switch is seen while it still answers. */
const PRESTOP_MS = 6_000;
/** New-connection probing goes on this long after the slice event (the switch is expected within ~1 s). */
const WINDOW_AFTER_EVENT_MS = 4_000;
/** Keep-alive connections pinned to the deleted pod; opened until this many reach it (or KEEPALIVE_TRIES). */
const KEEPALIVE_PINNED = 2;
const KEEPALIVE_TRIES = 16;
const KEEPALIVE_INTERVAL_MS = 100;
/** Twice kube-proxy's minSyncPeriod (1 s): a change after this long is synced at once. */
const QUIET_MS = 2_000;
/** New connections start at most this often: the resolution of the figures. */
const PROBE_INTERVAL_MS = 5;
const READY_TIMEOUT_MS = 120_000;
/** MEASURE_PROXY_DUMP=<file>: every probe of every round as JSON lines, for a closer look. */
const DUMP = process.env.MEASURE_PROXY_DUMP;

const tool = {
  name: 'measure:proxy',
  usage: 'npm run measure:proxy -- [rounds, 1-100, default 10 or MEASURE_PROXY_ROUNDS]',
};
/** A figure that could not be taken: what was to be seen was not. */
const measurementFailed = (message: string) => new TermlabError('CHECKS_FAILED', message);

/** Wall clock with sub-millisecond steps, comparable with klog's timestamps. */
const now = () => performance.timeOrigin + performance.now();

// Loaded by main once it knows the node's kubeconfig is there.
const kc = new k8s.KubeConfig();
let apps: k8s.AppsV1Api;
let core: k8s.CoreV1Api;

interface Probe {
  start: number;
  end: number;
  podUid: string | null;
  status: number;
  error?: string;
  localPort?: number;
}

/**
 * Source ports for new connections, taken in turn from the ephemeral range. Left to the kernel, a port comes
 * back within seconds at these rates while conntrack still holds the old connection (TIME_WAIT, 120 s), and
 * some of those SYNs were refused (seen here: up to 20% of probes for seconds), which no Service change caused.
 */
class SourcePorts {
  private static readonly FIRST = 32_768;
  private static readonly COUNT = 61_000 - 32_768;
  private next = Math.floor(Math.random() * SourcePorts.COUNT);
  take(): number {
    return SourcePorts.FIRST + (this.next++ % SourcePorts.COUNT);
  }
}
const sourcePorts = new SourcePorts();

/** GET /work?ms=1 (the endpoint that names its pod); `agent: false` makes a new connection, from a port of its own. */
async function probe(port: number, agent: Agent | false): Promise<Probe> {
  for (;;) {
    const result = await probeOnce(port, agent, agent ? undefined : sourcePorts.take());
    if (result.error !== 'EADDRINUSE') return result;
  }
}

function probeOnce(port: number, agent: Agent | false, localPort?: number): Promise<Probe> {
  const start = now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: NODE_IP,
        port,
        localPort,
        path: '/work?ms=1',
        agent,
        timeout: 3_000,
        headers: agent ? {} : { connection: 'close' },
      },
      (res: IncomingMessage) => {
        const podUid = (res.headers['x-pod-uid'] as string | undefined) ?? null;
        const localPort = res.socket?.localPort;
        res.resume();
        res.on('end', () => resolve({ start, end: now(), podUid, status: res.statusCode ?? 0, localPort }));
        res.on('error', (e) =>
          resolve({
            start,
            end: now(),
            podUid,
            status: res.statusCode ?? 0,
            error: (e as NodeJS.ErrnoException).code ?? e.message,
            localPort,
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) =>
      resolve({ start, end: now(), podUid: null, status: 0, error: (e as NodeJS.ErrnoException).code ?? e.message }),
    );
    req.end();
  });
}

interface EndpointView {
  uid: string;
  name: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}
interface SliceEvent {
  at: number;
  endpoints: EndpointView[];
}

/** Every EndpointSlice event of the Service, as seen here, and waiters on them. */
class SliceWatch {
  readonly events: SliceEvent[] = [];
  private slices = new Map<string, EndpointView[]>();
  private waiters: { test: (e: EndpointView[]) => boolean; resolve: () => void }[] = [];
  private abort: AbortController | null = null;

  async start(): Promise<void> {
    this.abort = await new k8s.Watch(kc).watch(
      `/apis/discovery.k8s.io/v1/namespaces/${NAMESPACE}/endpointslices`,
      { labelSelector: `kubernetes.io/service-name=${NAME}` },
      (type, slice: k8s.V1EndpointSlice) => {
        const at = now();
        const key = slice.metadata?.name ?? '';
        if (type === 'DELETED') this.slices.delete(key);
        else {
          this.slices.set(
            key,
            (slice.endpoints ?? []).map((e) => ({
              uid: e.targetRef?.uid ?? '',
              name: e.targetRef?.name ?? '',
              ready: e.conditions?.ready === true,
              serving: e.conditions?.serving === true,
              terminating: e.conditions?.terminating === true,
            })),
          );
        }
        const endpoints = this.current();
        this.events.push({ at, endpoints });
        const met = this.waiters.filter((w) => w.test(endpoints));
        this.waiters = this.waiters.filter((w) => !met.includes(w));
        for (const w of met) w.resolve();
      },
      (err) => {
        if (err && this.abort) console.error(`measure:proxy: the EndpointSlice watch ended: ${err}`);
      },
    );
  }

  current(): EndpointView[] {
    return [...this.slices.values()].flat();
  }

  /** When this host first saw the pod's endpoint not ready, at or after `since`. */
  notReadyAt(uid: string, since: number): number {
    const event = this.events.find((ev) => ev.at >= since && ev.endpoints.some((x) => x.uid === uid && !x.ready));
    if (!event) throw measurementFailed(`no EndpointSlice event marked pod ${uid} not ready`);
    return event.at;
  }

  /** Resolves once neither the slice nor kube-proxy's rules have changed for `ms`. */
  async quiet(ms: number): Promise<void> {
    for (;;) {
      const lastChange = Math.max(this.events.at(-1)?.at ?? 0, proxySyncs().at(-1)?.at ?? 0);
      const wait = lastChange + ms - now();
      if (wait <= 0) return;
      await sleep(wait);
    }
  }

  until(what: string, test: (e: EndpointView[]) => boolean, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    if (test(this.current())) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(measurementFailed(`${what}: not seen within ${timeoutMs / 1000}s`)),
        timeoutMs,
      );
      this.waiters.push({
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  stop(): void {
    const abort = this.abort;
    this.abort = null;
    abort?.abort();
  }
}

async function create(): Promise<number> {
  await apps.createNamespacedDeployment({
    namespace: NAMESPACE,
    body: {
      metadata: { name: NAME, labels: LABELS },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: LABELS },
        template: labTemplate(LABELS, PRESTOP_MS),
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      },
    },
  });
  const svc = await core.createNamespacedService({
    namespace: NAMESPACE,
    body: {
      metadata: { name: NAME, labels: LABELS },
      spec: { type: 'NodePort', selector: LABELS, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
  });
  const nodePort = svc.spec?.ports?.[0]?.nodePort;
  if (!nodePort) throw measurementFailed('the Service got no nodePort');
  return nodePort;
}

async function cleanUp(): Promise<void> {
  const gone = (e: unknown) => (e as { code?: number }).code === 404;
  await apps
    .deleteNamespacedDeployment({ namespace: NAMESPACE, name: NAME, propagationPolicy: 'Background' })
    .catch((e) => {
      if (!gone(e)) throw e;
    });
  await core.deleteNamespacedService({ namespace: NAMESPACE, name: NAME }).catch((e) => {
    if (!gone(e)) throw e;
  });
  // No need to wait out their hooks: nothing is measured any more.
  const until = Date.now() + 60_000;
  for (;;) {
    const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: SELECTOR })).items;
    if (!pods.length) return;
    if (Date.now() > until)
      throw new TermlabError(
        'SETUP_FAILED',
        `pods still present after clean-up: ${pods.map((p) => p.metadata?.name).join(', ')}`,
      );
    for (const p of pods)
      await core
        .deleteNamespacedPod({ namespace: NAMESPACE, name: p.metadata?.name ?? '', gracePeriodSeconds: 0 })
        .catch(() => {});
    await sleep(500);
  }
}

/** Probes until every ready endpoint has answered a new connection: kube-proxy knows them all. */
async function allReached(port: number, uids: string[]): Promise<void> {
  const seen = new Set<string>();
  const until = Date.now() + 30_000;
  while (uids.some((u) => !seen.has(u))) {
    if (Date.now() > until)
      throw measurementFailed(
        `new connections did not reach every ready pod within 30 s (reached ${seen.size} of ${uids.length})`,
      );
    const p = await probe(port, false);
    if (p.podUid) seen.add(p.podUid);
  }
}

interface KeepAliveRecord {
  probes: Probe[];
  pinnedPort: number;
}

async function pinKeepAlive(port: number, victim: string): Promise<{ agents: Agent[]; records: KeepAliveRecord[] }> {
  const agents: Agent[] = [];
  const records: KeepAliveRecord[] = [];
  for (let i = 0; i < KEEPALIVE_TRIES && agents.length < KEEPALIVE_PINNED; i++) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await probe(port, agent);
    if (first.podUid === victim && first.localPort) {
      agents.push(agent);
      records.push({ probes: [first], pinnedPort: first.localPort });
    } else agent.destroy();
  }
  return { agents, records };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank.
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/**
 * When new connections stopped reaching a pod: the start of the last one that did, relative to the slice event.
 * The pod gets each new connection with chance 1/n, so this is early by a few probe spacings on average
 * (geometric; with 3 pods and 5 ms spacing: 10 ms on average, 60 ms now and then). `gap` is how long this
 * process went without a probe after it (a stall of its own).
 */
interface Switch {
  uid: string;
  eventAt: number;
  delay: number;
  gap: number;
  sinceLastSync: number | null;
  syncDoneAfterEvent: number | null;
  syncTook: string | null;
}

/** Measures one pod's switch from the probes, its slice event and kube-proxy's log. */
function switchOf(probes: Probe[], uid: string, eventAt: number): Switch {
  let index = probes.length - 1;
  while (index >= 0 && probes[index]?.podUid !== uid) index--;
  const last = probes[index];
  if (!last) throw measurementFailed(`no new connection reached pod ${uid} at all`);
  const next = probes[index + 1] ?? last;
  const syncs = proxySyncs();
  const before = syncs.filter((s) => s.at < eventAt).at(-1);
  const after = syncs.find((s) => s.at >= eventAt);
  return {
    uid,
    eventAt,
    delay: last.start - eventAt,
    gap: next.start - last.start,
    sinceLastSync: before ? eventAt - before.at : null,
    syncDoneAfterEvent: after ? after.at - eventAt : null,
    syncTook: after?.elapsed ?? null,
  };
}

function describe(s: Switch): string {
  return (
    `delay ${s.delay.toFixed(1)} ms${s.gap > 3 * PROBE_INTERVAL_MS ? ` (no probe for ${s.gap.toFixed(0)} ms after it)` : ''} (kube-proxy's previous sync ended ${s.sinceLastSync?.toFixed(0) ?? '?'} ms before the event, ` +
    `the next ended ${s.syncDoneAfterEvent?.toFixed(0) ?? '?'} ms after it, taking ${s.syncTook ?? '?'})`
  );
}

/** Failed new connections: how many of each kind, and when, relative to `at`. */
function failuresOf(probes: Probe[], at: number): string {
  const failed = probes.filter((p) => p.status !== 200);
  if (!failed.length) return '0 failed';
  const kinds = new Map<string, number[]>();
  for (const p of failed) {
    const kind = p.error ?? `HTTP ${p.status}`;
    kinds.set(kind, [...(kinds.get(kind) ?? []), p.start - at]);
  }
  return `${failed.length} failed (${[...kinds].map(([k, t]) => `${t.length} ${k} from ${Math.min(...t).toFixed(0)} to ${Math.max(...t).toFixed(0)} ms`).join(', ')})`;
}

function spacing(probes: Probe[]): number {
  return quantile(
    probes.slice(1).map((p, i) => p.start - (probes[i]?.start ?? p.start)),
    0.5,
  );
}

/** Probes new connections in a loop until stopped. */
function startProbing(port: number): { probes: Probe[]; stop: () => Promise<void> } {
  const probes: Probe[] = [];
  let probing = true;
  const loop = (async () => {
    while (probing) {
      const p = await probe(port, false);
      probes.push(p);
      // Paced so that no source port is used twice within conntrack's TIME_WAIT (28k ports / 200 per s > 120 s).
      await sleep(Math.max(0, p.start + PROBE_INTERVAL_MS - now()));
    }
  })();
  return {
    probes,
    stop: async () => {
      probing = false;
      await loop;
    },
  };
}

async function steady(port: number, watch: SliceWatch): Promise<EndpointView[]> {
  await watch.until(
    'every replica ready, none terminating',
    (e) => e.length === REPLICAS && e.every((x) => x.ready && !x.terminating),
  );
  const ready = watch.current();
  await allReached(
    port,
    ready.map((e) => e.uid),
  );
  return ready;
}

interface DeleteRound {
  switch: Switch;
  sliceAfterDelete: number;
  deleteToSwitch: number;
  deleteToSyncDone: number | null;
  failures: number;
  spacing: number;
  keepAliveAfterSwitch: number;
  keepAliveLastAfterEvent: number | null;
}

/**
 * One pod deleted after a quiet spell (no slice change, no kube-proxy sync for QUIET_MS), with keep-alive
 * connections pinned to it.
 */
async function deleteRound(index: number, port: number, watch: SliceWatch): Promise<DeleteRound> {
  const ready = await steady(port, watch);
  // Probing from well before the delete: the pod's last new connection may come before the event arrives here.
  const prober = startProbing(port);
  await watch.quiet(QUIET_MS);
  const victim = ready[Math.floor(Math.random() * ready.length)];
  if (!victim) throw measurementFailed(`round ${index}: no ready endpoint`);
  const { agents, records } = await pinKeepAlive(port, victim.uid);
  // Keep-alive requests on the pinned connections, until their pod stops answering on them.
  let keeping = true;
  const keepers = records.map(async (r, i) => {
    const agent = agents[i] ?? false;
    while (keeping) {
      await sleep(KEEPALIVE_INTERVAL_MS);
      r.probes.push(await probe(port, agent));
    }
  });

  const deleteAt = now();
  await core.deleteNamespacedPod({ namespace: NAMESPACE, name: victim.name });
  await watch.until(
    'the deleted pod marked not ready in the EndpointSlice',
    (e) => e.some((x) => x.uid === victim.uid && !x.ready),
    30_000,
  );
  const eventAt = watch.notReadyAt(victim.uid, deleteAt);
  await sleep(WINDOW_AFTER_EVENT_MS);
  await prober.stop();
  // The keep-alive side goes on past TERM (PRESTOP_MS after the delete) to see how those connections end.
  await sleep(Math.max(0, deleteAt + PRESTOP_MS + 2_000 - now()));
  keeping = false;
  await Promise.all(keepers);
  for (const a of agents) a.destroy();

  const sw = switchOf(prober.probes, victim.uid, eventAt);
  dump({
    round: `delete ${index}`,
    victim: victim.uid,
    deleteAt,
    eventAt,
    probes: prober.probes,
    keepAlive: records.map((r) => r.probes),
  });
  const switchAt = sw.eventAt + sw.delay;
  // After a quiet spell the first sync to end after the delete is the one that applied it.
  const syncDone = proxySyncs().find((x) => x.at > deleteAt);
  const kaToVictim = records.flatMap((r) => r.probes).filter((p) => p.podUid === victim.uid);
  const keepAliveEnd = records.map((r) => {
    const off = r.probes.find(
      (p) => p.podUid !== victim.uid || p.status !== 200 || p.error || p.localPort !== r.pinnedPort,
    );
    if (!off) return 'still on the pod';
    const what =
      off.error ??
      (off.status !== 200 ? `HTTP ${off.status}` : off.localPort !== r.pinnedPort ? 'a new connection' : 'another pod');
    return `${what} at +${Math.round(off.start - deleteAt)} ms after the delete`;
  });
  const result: DeleteRound = {
    switch: sw,
    sliceAfterDelete: eventAt - deleteAt,
    deleteToSwitch: switchAt - deleteAt,
    deleteToSyncDone: syncDone ? syncDone.at - deleteAt : null,
    failures: prober.probes.filter((p) => p.status !== 200).length,
    spacing: spacing(prober.probes),
    keepAliveAfterSwitch: kaToVictim.filter((p) => p.start > switchAt).length,
    keepAliveLastAfterEvent: kaToVictim.length ? (kaToVictim.at(-1)?.start ?? eventAt) - eventAt : null,
  };
  console.log(
    `delete round ${index}: ${describe(sw)}; slice event ${result.sliceAfterDelete.toFixed(0)} ms, switch ${result.deleteToSwitch.toFixed(0)} ms, kube-proxy's sync done ${result.deleteToSyncDone?.toFixed(0) ?? '?'} ms after the delete; ` +
      `${prober.probes.length} new connections, ${failuresOf(prober.probes, eventAt)} relative to the event; keep-alive: ${records.length} pinned, ${result.keepAliveAfterSwitch} requests ` +
      `reached the pod after the switch, the last ${result.keepAliveLastAfterEvent?.toFixed(0) ?? '-'} ms after the event; ${keepAliveEnd.join('; ') || 'none pinned'}`,
  );
  return result;
}

/** A rolling update of the whole Deployment (maxSurge 1, maxUnavailable 0): each old pod is deleted as its successor becomes ready. */
async function rolloutRound(
  index: number,
  port: number,
  watch: SliceWatch,
): Promise<{ switches: Switch[]; failures: number; spacing: number }> {
  const old = await steady(port, watch);
  const prober = startProbing(port);
  const changedAt = now();
  await apps.patchNamespacedDeployment(
    {
      namespace: NAMESPACE,
      name: NAME,
      body: { spec: { template: { metadata: { annotations: { 'termlab.io/measure-rollout': String(index) } } } } },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  for (const pod of old)
    await watch.until(
      `old pod ${pod.name} marked not ready`,
      (e) => e.some((x) => x.uid === pod.uid && !x.ready),
      READY_TIMEOUT_MS,
    );
  const events = old.map((pod) => watch.notReadyAt(pod.uid, changedAt));
  await sleep(Math.max(0, Math.max(...events) + WINDOW_AFTER_EVENT_MS - now()));
  await prober.stop();
  const switches = old.map((pod, i) => switchOf(prober.probes, pod.uid, events[i] ?? changedAt));
  dump({ round: `rollout ${index}`, old: old.map((p) => p.uid), changedAt, events, probes: prober.probes });
  const failures = prober.probes.filter((p) => p.status !== 200).length;
  console.log(
    `rollout ${index}: ${switches.map(describe).join('; ')}; ${prober.probes.length} new connections, ${failuresOf(prober.probes, changedAt)} relative to the template change`,
  );
  return { switches, failures, spacing: spacing(prober.probes) };
}

function dump(record: object): void {
  if (DUMP) appendFileSync(DUMP, `${JSON.stringify(record)}\n`);
}

function printFigures(prefix: string, delays: number[]): void {
  const fmt = (v: number) => v.toFixed(1);
  console.log(`${prefix}_ms_median: ${fmt(quantile(delays, 0.5))}`);
  console.log(`${prefix}_ms_p95: ${fmt(quantile(delays, 0.95))}`);
  console.log(`${prefix}_ms_min: ${fmt(Math.min(...delays))}`);
  console.log(`${prefix}_ms_max: ${fmt(Math.max(...delays))}`);
}

async function main(): Promise<void> {
  const { positionals } = devArgs(tool, {}, { allowPositionals: true });
  if (positionals.length > 1)
    throw new TermlabError('USAGE', `one argument, the rounds: got ${positionals.length} (usage: ${tool.usage})`);
  const rounds = wholeNumber(
    'rounds (argument or MEASURE_PROXY_ROUNDS)',
    positionals[0] ?? process.env.MEASURE_PROXY_ROUNDS ?? '10',
    1,
    100,
  );
  if (!existsSync(paths.kubeconfig))
    throw new TermlabError('CLUSTER_UNREACHABLE', `no kubeconfig at ${paths.kubeconfig}: run npm run cluster:up first`);
  kc.loadFromFile(paths.kubeconfig);
  kc.setCurrentContext(CONTEXT);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  core = kc.makeApiClient(k8s.CoreV1Api);
  const watch = new SliceWatch();
  let cleanUpFailed: unknown = null;
  try {
    // A run killed earlier may have left its Deployment and Service (same name and labels).
    await cleanUp();
    const port = await create();
    const rollouts = Math.ceil(rounds / REPLICAS);
    console.log(
      `Deployment and NodePort Service ${NAMESPACE}/${NAME}: ${REPLICAS} replicas, probing http://${NODE_IP}:${port}; ${rounds} deletions, ${rollouts} rollouts`,
    );
    await watch.start();
    const deletes: DeleteRound[] = [];
    for (let i = 1; i <= rounds; i++) deletes.push(await deleteRound(i, port, watch));
    const rolls: Awaited<ReturnType<typeof rolloutRound>>[] = [];
    for (let i = 1; i <= rollouts; i++) rolls.push(await rolloutRound(i, port, watch));

    const fmt = (v: number) => v.toFixed(1);
    // A deletion after a quiet spell: the figure for one endpoint change on its own.
    printFigures(
      'proxy_sync_delay',
      deletes.map((r) => r.switch.delay),
    );
    // The same from the delete request (this process's own clock only: no watch in between).
    printFigures(
      'delete_to_switch',
      deletes.map((r) => r.deleteToSwitch),
    );
    // The end of the sync that applied it, from kube-proxy's log: no probe, no watch (an upper bound of the switch).
    const syncDone = deletes.map((r) => r.deleteToSyncDone).filter((v): v is number => v !== null);
    if (syncDone.length) printFigures('delete_to_kube_proxy_sync_done', syncDone);
    // Old pods replaced in a rolling update: changes follow one another within kube-proxy's minSyncPeriod.
    printFigures(
      'rollout_proxy_sync_delay',
      rolls.flatMap((r) => r.switches.map((s) => s.delay)),
    );
    console.log(
      `probe_spacing_ms_median: ${fmt(quantile([...deletes.map((r) => r.spacing), ...rolls.map((r) => r.spacing)], 0.5))}`,
    );
    console.log(
      `endpointslice_event_after_delete_ms_median: ${fmt(
        quantile(
          deletes.map((r) => r.sliceAfterDelete),
          0.5,
        ),
      )}`,
    );
    const logged = [...deletes.map((r) => r.switch), ...rolls.flatMap((r) => r.switches)]
      .map((s) => s.syncDoneAfterEvent)
      .filter((v): v is number => v !== null);
    if (logged.length) console.log(`kube_proxy_sync_done_after_event_ms_median: ${fmt(quantile(logged, 0.5))}`);
    console.log(
      `new_connection_failures: ${deletes.reduce((n, r) => n + r.failures, 0) + rolls.reduce((n, r) => n + r.failures, 0)}`,
    );
    console.log(
      `keepalive_requests_to_terminating_pod_after_switch: ${deletes.reduce((n, r) => n + r.keepAliveAfterSwitch, 0)}`,
    );
    const kaLast = deletes.map((r) => r.keepAliveLastAfterEvent).filter((v): v is number => v !== null);
    if (kaLast.length)
      console.log(`keepalive_last_reply_from_terminating_pod_after_event_ms_median: ${fmt(quantile(kaLast, 0.5))}`);
  } finally {
    watch.stop();
    // Said here, so that a failure of the measurement itself still ends the tool as its own.
    await cleanUp().catch((e) => {
      console.error(`measure:proxy: clean-up failed: ${(e as Error).message}`);
      cleanUpFailed = e;
    });
  }
  if (cleanUpFailed)
    throw new TermlabError(
      'SETUP_FAILED',
      `the clean-up failed (above): ${(cleanUpFailed as Error).message}`,
      {},
      {
        cause: cleanUpFailed,
      },
    );
}

await runDevTool(tool, main);
