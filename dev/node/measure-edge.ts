// npm run measure:edge [rounds] — with the node and its edge up (npm run cluster:up): what the real edge,
// Traefik v3.7.13 behind the Gateway edge, does to requests while pods go away. Prints `name: value` lines;
// docs/edge.md gives the method and the figures, the simulator's edge takes its timing from them.
//
// (a) lag: a Deployment of the lab server (3 replicas, preStop sleep, so a terminating pod keeps serving)
//     behind an HTTPRoute and an Ingress; the host sends back-to-back requests through the NodePort to both,
//     each answer naming its pod (x-pod-uid), while one pod is deleted. lag = start of the last request the
//     deleted pod answered − this host's arrival of the EndpointSlice event that marked it not ready (and −
//     the delete request). One clock, this host's.
// (b) the kept-alive race: an upstream (dev/node/measure-edge-upstream.cjs) that closes a reused
//     connection without answering: what a GET, a POST and a POST with an Idempotency-Key get.
// (c) no endpoint, connection refused, an upstream that never answers (with and without a route timeout).
// (d) the access-log lines of those requests, from the traefik pod's log.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { percentile } from '../../bench/stats.ts';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool, wholeNumber } from '../entry.ts';
import { applyObjects, EDGE_NAMESPACE, EDGE_NODE_PORT, EDGE_SELECTOR } from './edge.ts';
import { labTemplate } from './lab-template.ts';
import { CONTEXT, MODULE_DIR, NODE_IP, paths } from './layout.ts';

const NS = 'termlab-measure-edge';
const DOMAIN = 'measure-edge.test';
const host = (name: string) => `${name}.${DOMAIN}`;
const REPLICAS = 3;
const PRESTOP_MS = 6_000;
/** Probing goes on this long after the slice event; the switch is expected within the 2 s throttle. */
const WINDOW_AFTER_EVENT_MS = 4_000;
/** Longer than providersThrottleDuration (2 s): a change after this long is forwarded at once. */
const QUIET_MS = 3_000;
const WORKERS_PER_HOST = 2;
/** MEASURE_EDGE_PROBE_GAP_MS: a pause after each probe, to see the lag under a lighter load (default none). */
const PROBE_GAP_MS = Number(process.env.MEASURE_EDGE_PROBE_GAP_MS ?? 0) || 0;
/** In a burst, the second deletion this long after the first one's slice event: well inside the 2 s throttle. */
const BURST_GAP_MS = 300;
const ROUTE_TIMEOUT = '2s';
const HANG_CLIENT_TIMEOUT_MS = 5_000;

const tool = { name: 'measure:edge', usage: 'npm run measure:edge -- [rounds, 1-100, default 10]' };
const failed = (message: string) => new TermlabError('CHECKS_FAILED', message);
const now = () => performance.timeOrigin + performance.now();

const kc = new k8s.KubeConfig();
let core: k8s.CoreV1Api;

interface Answer {
  start: number;
  end: number;
  status: number;
  podUid: string | null;
  body: string;
  error?: string;
}

function send(
  hostName: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent; timeoutMs?: number } = {},
): Promise<Answer> {
  const start = now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: NODE_IP,
        port: EDGE_NODE_PORT,
        path,
        method: options.method ?? 'GET',
        agent: options.agent ?? false,
        headers: { host: hostName, ...options.headers },
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () =>
          resolve({
            start,
            end: now(),
            status: res.statusCode ?? 0,
            podUid: (res.headers['x-pod-uid'] as string | undefined) ?? null,
            body: body.slice(0, 120),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) =>
      resolve({
        start,
        end: now(),
        status: 0,
        podUid: null,
        body: '',
        error: (e as NodeJS.ErrnoException).code ?? e.message,
      }),
    );
    req.end(options.body);
  });
}

// ---- objects ----

function upstreamTemplate(labels: Record<string, string>): k8s.V1PodTemplateSpec {
  const template = labTemplate(labels, PRESTOP_MS);
  const [lab] = template.spec?.containers ?? [];
  if (!lab) throw new TermlabError('LAB_INVALID', 'manifests/lab-pod.yaml: spec.containers is empty');
  lab.command = ['/usr/local/bin/node', '-e', readFileSync(join(MODULE_DIR, 'measure-edge-upstream.cjs'), 'utf8')];
  lab.readinessProbe = { tcpSocket: { port: 'http' }, periodSeconds: 1 };
  lab.lifecycle = undefined;
  // PID 1 without a TERM handler ignores TERM: the kubelet's KILL after 1 s ends it.
  if (template.spec) template.spec.terminationGracePeriodSeconds = 1;
  return template;
}

const deployment = (name: string, replicas: number, template: k8s.V1PodTemplateSpec) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: { replicas, selector: { matchLabels: template.metadata?.labels }, template },
});
const service = (name: string, selector: Record<string, string>, targetPort: number | string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS },
  spec: { selector, ports: [{ name: 'http', port: 80, targetPort }] },
});
const httpRoute = (name: string, backend: string, timeout?: string) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace: NS },
  spec: {
    parentRefs: [{ name: 'edge', namespace: EDGE_NAMESPACE }],
    hostnames: [host(name)],
    rules: [{ backendRefs: [{ name: backend, port: 80 }], ...(timeout ? { timeouts: { request: timeout } } : {}) }],
  },
});
const ingress = (name: string, backend: string) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: NS },
  spec: {
    ingressClassName: 'traefik',
    rules: [
      {
        host: host(name),
        http: {
          paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: backend, port: { number: 80 } } } }],
        },
      },
    ],
  },
});

const WEB = { app: 'web' };
const ODD = { app: 'odd' };
const SOLO = { app: 'solo' };
const BARE = { app: 'bare' };

/** The lab server with no preStop: TERM at once, it stops listening and leaves when idle. */
function bareTemplate(): k8s.V1PodTemplateSpec {
  const template = labTemplate(BARE, PRESTOP_MS);
  const [lab] = template.spec?.containers ?? [];
  if (lab) lab.lifecycle = undefined;
  return template;
}

/** A bare pod (no replacement comes) behind its own route and Ingress: the last endpoint terminating. */
function soloPod(): k8s.KubernetesObject {
  const template = labTemplate(SOLO, PRESTOP_MS);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'solo', namespace: NS, labels: SOLO },
    spec: template.spec,
  } as k8s.KubernetesObject;
}

function objects(): k8s.KubernetesObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    deployment('web', REPLICAS, labTemplate(WEB, PRESTOP_MS)),
    service('web', WEB, 'http'),
    httpRoute('web', 'web'),
    ingress('web-ing', 'web'),
    deployment('odd', 1, upstreamTemplate(ODD)),
    soloPod(),
    deployment('bare', REPLICAS, bareTemplate()),
    service('bare', BARE, 'http'),
    httpRoute('bare', 'bare'),
    ingress('bare-ing', 'bare'),
    service('solo', SOLO, 'http'),
    httpRoute('solo', 'solo'),
    ingress('solo-ing', 'solo'),
    service('odd', ODD, 'http'),
    httpRoute('odd', 'odd'),
    httpRoute('timeout', 'odd', ROUTE_TIMEOUT),
    service('refused', ODD, 9),
    httpRoute('refused', 'refused'),
    service('none', { app: 'nothing-matches' }, 'http'),
    httpRoute('none', 'none'),
    ingress('none-ing', 'none'),
  ] as k8s.KubernetesObject[];
}

async function cleanUp(): Promise<void> {
  await core.deleteNamespace({ name: NS }).catch((e) => {
    if ((e as { code?: number }).code !== 404) throw e;
  });
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    try {
      await core.readNamespace({ name: NS });
    } catch {
      return;
    }
    await sleep(500);
  }
  throw new TermlabError('SETUP_FAILED', `namespace ${NS} still there 120 s after its deletion`);
}

// ---- (a) the lag ----

interface View {
  uid: string;
  ready: boolean;
}

class SliceWatch {
  readonly events: { at: number; endpoints: View[] }[] = [];
  private slices = new Map<string, View[]>();
  private abort: AbortController | null = null;
  async start(): Promise<void> {
    this.abort = await new k8s.Watch(kc).watch(
      `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=web' },
      (type, slice: k8s.V1EndpointSlice) => {
        const key = slice.metadata?.name ?? '';
        if (type === 'DELETED') this.slices.delete(key);
        else
          this.slices.set(
            key,
            (slice.endpoints ?? []).map((e) => ({ uid: e.targetRef?.uid ?? '', ready: e.conditions?.ready === true })),
          );
        this.events.push({ at: now(), endpoints: [...this.slices.values()].flat() });
      },
      () => {},
    );
  }
  current(): View[] {
    return [...this.slices.values()].flat();
  }
  lastAt(): number {
    return this.events.at(-1)?.at ?? 0;
  }
  notReadyAt(uid: string, since: number): number | undefined {
    return this.events.find((e) => e.at >= since && e.endpoints.some((x) => x.uid === uid && !x.ready))?.at;
  }
  stop(): void {
    this.abort?.abort();
  }
}

async function readyPods(): Promise<string[]> {
  const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=web' })).items;
  return pods
    .filter(
      (p) =>
        !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    )
    .map((p) => p.metadata?.uid ?? '');
}

/** Until the edge has answered from every ready pod of web, through both the route and the Ingress. */
async function allReached(): Promise<string[]> {
  const until = Date.now() + 120_000;
  const agent = new Agent({ keepAlive: true });
  try {
    while (Date.now() < until) {
      const uids = await readyPods();
      if (uids.length === REPLICAS) {
        for (const h of [host('web'), host('web-ing')]) {
          const seen = new Set<string>();
          for (let i = 0; i < 30 && seen.size < uids.length; i++) {
            const a = await send(h, '/healthz', { agent });
            if (a.podUid) seen.add(a.podUid);
          }
          if (!uids.every((u) => seen.has(u))) break;
          if (h === host('web-ing')) return uids;
        }
      }
      await sleep(250);
    }
  } finally {
    agent.destroy();
  }
  throw failed(`the edge did not reach all ${REPLICAS} pods of web within 120 s`);
}

function probeLoop(hostName: string, timeoutMs = 10_000): { answers: Answer[]; stop: () => Promise<void> } {
  const answers: Answer[] = [];
  let running = true;
  const agent = new Agent({ keepAlive: true, maxSockets: WORKERS_PER_HOST });
  const workers = Array.from({ length: WORKERS_PER_HOST }, async () => {
    while (running) {
      answers.push(await send(hostName, '/healthz', { agent, timeoutMs }));
      if (PROBE_GAP_MS) await sleep(PROBE_GAP_MS);
    }
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      agent.destroy();
    },
  };
}

interface Round {
  route: number;
  ingress: number;
  routeFromDelete: number;
  ingressFromDelete: number;
  failures: number;
  spacingMs: number;
}

/** Until the slice holds exactly the Deployment's pods, all ready (the last victim gone), then quiet for QUIET_MS. */
async function settle(watch: SliceWatch): Promise<string[]> {
  const until = Date.now() + 120_000;
  for (;;) {
    const uids = await allReached();
    const endpoints = watch.current();
    if (endpoints.length === REPLICAS && endpoints.every((e) => e.ready && uids.includes(e.uid))) {
      const wait = watch.lastAt() + QUIET_MS - now();
      if (wait <= 0) return uids;
      await sleep(wait);
    } else if (Date.now() > until) throw failed(`the slice of web did not settle to ${REPLICAS} ready endpoints`);
    else await sleep(250);
  }
}

/** Deletes the pod; resolves with the delete's time and this host's arrival of the slice event that marked it not ready. */
async function deletePod(
  uid: string,
  watch: SliceWatch,
): Promise<{ name: string; deletedAt: number; sliceAt: number }> {
  const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=web' })).items;
  const name = pods.find((p) => p.metadata?.uid === uid)?.metadata?.name ?? '';
  const deletedAt = now();
  await core.deleteNamespacedPod({ namespace: NS, name });
  let sliceAt: number | undefined;
  const until = Date.now() + 30_000;
  while (!(sliceAt = watch.notReadyAt(uid, deletedAt)) && Date.now() < until) await sleep(20);
  if (!sliceAt) throw failed(`no EndpointSlice event marked ${name} not ready`);
  return { name, deletedAt, sliceAt };
}

async function deleteRound(index: number, watch: SliceWatch, burstGapMs?: number): Promise<Round> {
  const uids = await settle(watch);
  const probes = [probeLoop(host('web')), probeLoop(host('web-ing'))];
  await sleep(300);
  // A burst: another pod deleted just before, so this change comes within the throttle of the one before.
  if (burstGapMs !== undefined) {
    await deletePod(uids[(index + 1) % uids.length] as string, watch);
    await sleep(burstGapMs);
  }
  const victim = uids[index % uids.length] as string;
  const { name, deletedAt, sliceAt } = await deletePod(victim, watch);
  await sleep(WINDOW_AFTER_EVENT_MS);
  for (const p of probes) await p.stop();
  const [route, ing] = probes.map((p) => p.answers) as [Answer[], Answer[]];
  const last = (answers: Answer[]) => Math.max(...answers.filter((a) => a.podUid === victim).map((a) => a.start));
  const lastRoute = last(route);
  const lastIng = last(ing);
  const all = [...route, ...ing];
  const spacing = (route.length ? (route.at(-1)!.start - route[0]!.start) / route.length : 0) * WORKERS_PER_HOST;
  const r: Round = {
    route: lastRoute - sliceAt,
    ingress: lastIng - sliceAt,
    routeFromDelete: lastRoute - deletedAt,
    ingressFromDelete: lastIng - deletedAt,
    failures: all.filter((a) => a.status !== 200).length,
    spacingMs: spacing,
  };
  console.log(
    `  round ${index}: ${name}: slice not-ready ${(sliceAt - deletedAt).toFixed(0)} ms after delete; last answer via route ${r.route.toFixed(0)} ms, via ingress ${r.ingress.toFixed(0)} ms after it; ${all.length} requests, ${r.failures} not 200`,
  );
  return r;
}

function figures(name: string, values: number[]): void {
  const f = (v: number) => v.toFixed(0);
  console.log(`${name}_ms_p50: ${f(percentile(values, 0.5))}`);
  console.log(`${name}_ms_p99: ${f(percentile(values, 0.99))}`);
  console.log(`${name}_ms_max: ${f(Math.max(...values))}`);
}

// ---- (b), (c), (d) ----

async function upstreamLog(): Promise<{ id: string | null; conn: number; seq: number; action: string }[]> {
  const a = await send(host('odd'), '/log');
  if (a.status !== 200) throw failed(`the upstream's /log answered ${a.status}`);
  // /log's body is cut at 120 characters by send: read it whole here.
  return new Promise((resolve, reject) => {
    const req = request(
      { host: NODE_IP, port: EDGE_NODE_PORT, path: '/log', headers: { host: host('odd') }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve(JSON.parse(body)));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const describe = (a: Answer) => (a.error ? `no answer (${a.error})` : `${a.status} ${JSON.stringify(a.body)}`);

async function race(run: string): Promise<Record<string, string>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const results: Record<string, string> = {};
  const kinds: [string, { method: string; headers?: Record<string, string>; body?: string }][] = [
    ['get', { method: 'GET' }],
    ['post', { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    [
      'post_idempotency_key',
      {
        method: 'POST',
        body: 'x=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `${run}-key` },
      },
    ],
    // Go replays a request with an Idempotency-Key only when it has no body to send again.
    ['post_idempotency_key_no_body', { method: 'POST', headers: { 'idempotency-key': `${run}-key` } }],
  ];
  try {
    for (const [kind, opts] of kinds) {
      for (let trial = 1; trial <= 3; trial++) {
        const id = `${run}-race-${kind}-${trial}`;
        // The edge's connection to the upstream is made (or reused) by the first, reused by the second.
        await send(host('odd'), '/warm', { agent, headers: { 'x-termlab-request': `${id}-warm` } });
        const a = await send(host('odd'), '/close-reused', {
          agent,
          ...opts,
          headers: { ...opts.headers, 'x-termlab-request': id },
        });
        const arrivals = (await upstreamLog()).filter((r) => r.id === id);
        const verdict = `${describe(a)}; reached the upstream ${arrivals.length}x (${arrivals.map((r) => `conn ${r.conn} #${r.seq} ${r.action}`).join(', ')})`;
        console.log(`  race ${kind} ${trial}: ${verdict}`);
        results[`race_${kind}`] ??= verdict.replace(/conn \d+ #\d+ /g, '');
      }
    }
  } finally {
    agent.destroy();
  }
  return results;
}

interface AccessLine {
  [field: string]: unknown;
}

async function accessLog(): Promise<AccessLine[]> {
  const pods = (await core.listNamespacedPod({ namespace: EDGE_NAMESPACE, labelSelector: EDGE_SELECTOR })).items;
  const lines: AccessLine[] = [];
  for (const p of pods) {
    const log = await core.readNamespacedPodLog({ namespace: EDGE_NAMESPACE, name: p.metadata?.name ?? '' });
    for (const line of String(log).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(line) as AccessLine);
      } catch {
        /* a general log line that happens to start with a brace */
      }
    }
  }
  return lines;
}

/** Deletes the solo pod and records, per route, what the answers were after its slice said not ready. */
async function lastEndpoint(): Promise<Record<string, string>> {
  const until = Date.now() + 60_000;
  for (;;) {
    const a = await send(host('solo'), '/healthz');
    const b = await send(host('solo-ing'), '/healthz');
    if (a.status === 200 && b.status === 200) break;
    if (Date.now() > until) throw failed('the solo pod did not answer through the edge within 60 s');
    await sleep(250);
  }
  const probes = [probeLoop(host('solo')), probeLoop(host('solo-ing'))];
  await sleep(300);
  const deletedAt = now();
  await core.deleteNamespacedPod({ namespace: NS, name: 'solo' });
  await sleep(PRESTOP_MS - 1_500);
  for (const p of probes) await p.stop();
  const summary = (answers: Answer[]) => {
    const after = answers.filter((a) => a.start > deletedAt + 3_000);
    const counts = new Map<string, number>();
    for (const a of after) {
      const key = a.error ? `no answer (${a.error})` : `${a.status} ${JSON.stringify(a.body)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, n]) => `${k} x${n}`).join(', ');
  };
  const [route, ing] = probes.map((p) => p.answers) as [Answer[], Answer[]];
  return {
    last_endpoint_terminating_route: `3-4.5 s after the delete, while the pod still serves: ${summary(route)}`,
    last_endpoint_terminating_ingress: `3-4.5 s after the delete, while the pod still serves: ${summary(ing)}`,
  };
}

/** Deletes one pod of bare (no preStop) and counts what the requests through the edge got meanwhile. */
async function noPreStop(): Promise<Record<string, string>> {
  const until = Date.now() + 120_000;
  let pods: k8s.V1Pod[] = [];
  for (;;) {
    pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=bare' })).items.filter((p) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (pods.length === REPLICAS && (await send(host('bare'), '/healthz')).status === 200) break;
    if (Date.now() > until) throw failed('bare did not get ready through the edge within 120 s');
    await sleep(250);
  }
  await sleep(QUIET_MS);
  // Longer than Traefik's 30 s dialTimeout: a request to the vanished pod's address is seen to its end.
  const probes = [probeLoop(host('bare'), 40_000), probeLoop(host('bare-ing'), 40_000)];
  await sleep(300);
  await core.deleteNamespacedPod({ namespace: NS, name: pods[0]?.metadata?.name ?? '' });
  await sleep(WINDOW_AFTER_EVENT_MS);
  for (const p of probes) await p.stop();
  const summary = (answers: Answer[]) => {
    const counts = new Map<string, number>();
    for (const a of answers) {
      const key = a.error
        ? `no answer (${a.error} after ${((a.end - a.start) / 1000).toFixed(0)} s)`
        : `${a.status} ${JSON.stringify(a.body.slice(0, 40))}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, n]) => `${k} x${n}`).join(', ');
  };
  const [route, ing] = probes.map((p) => p.answers) as [Answer[], Answer[]];
  return { no_prestop_route: summary(route), no_prestop_ingress: summary(ing) };
}

async function main(): Promise<void> {
  const { positionals } = devArgs(tool, {}, { allowPositionals: true });
  const rounds = wholeNumber('rounds', positionals[0] ?? '10', 1, 100);
  kc.loadFromFile(paths.kubeconfig);
  kc.setCurrentContext(CONTEXT);
  core = kc.makeApiClient(k8s.CoreV1Api);
  const run = `me${Date.now().toString(36)}`;
  await cleanUp();
  const watch = new SliceWatch();
  try {
    await applyObjects(kc, objects());
    await watch.start();
    console.log(`(a) ${rounds} deletions of one of ${REPLICAS} web pods, probed via HTTPRoute and Ingress`);
    const results: Round[] = [];
    for (let i = 1; i <= rounds; i++) results.push(await deleteRound(i, watch));
    figures(
      'route_lag_after_slice_not_ready',
      results.map((r) => r.route),
    );
    figures(
      'ingress_lag_after_slice_not_ready',
      results.map((r) => r.ingress),
    );
    figures(
      'route_lag_after_delete',
      results.map((r) => r.routeFromDelete),
    );
    figures(
      'ingress_lag_after_delete',
      results.map((r) => r.ingressFromDelete),
    );
    console.log(`requests_not_200_during_deletions: ${results.reduce((n, r) => n + r.failures, 0)}`);
    console.log(
      `probe_spacing_ms_median: ${percentile(
        results.map((r) => r.spacingMs),
        0.5,
      ).toFixed(1)}`,
    );
    const bursts = Math.ceil(rounds / 3);
    console.log(`(a') ${bursts} bursts: a pod deleted ${BURST_GAP_MS} ms after another's slice event`);
    const burst: Round[] = [];
    for (let i = 1; i <= bursts; i++) burst.push(await deleteRound(i, watch, BURST_GAP_MS));
    figures(
      'burst_route_lag_after_slice_not_ready',
      burst.map((r) => r.route),
    );
    figures(
      'burst_ingress_lag_after_slice_not_ready',
      burst.map((r) => r.ingress),
    );
    console.log(`requests_not_200_during_bursts: ${burst.reduce((n, r) => n + r.failures, 0)}`);

    console.log('(b) a kept-alive upstream connection closed by the app as the edge sends on it');
    for (const [k, v] of Object.entries(await race(run))) console.log(`${k}: ${v}`);

    console.log('(c) no endpoint, connection refused, an upstream that never answers');
    const tag = (name: string) => ({ headers: { 'x-termlab-request': `${run}-${name}` } });
    console.log(`no_endpoint_httproute: ${describe(await send(host('none'), '/x', tag('none-route')))}`);
    console.log(`no_endpoint_ingress: ${describe(await send(host('none-ing'), '/x', tag('none-ingress')))}`);
    console.log(`connection_refused: ${describe(await send(host('refused'), '/x', tag('refused')))}`);
    const timed = await send(host('timeout'), '/hang', tag('route-timeout'));
    console.log(
      `upstream_hang_route_timeouts_request_${ROUTE_TIMEOUT}: ${describe(timed)} after ${((timed.end - timed.start) / 1000).toFixed(1)} s`,
    );
    const hung = await send(host('odd'), '/hang', { ...tag('hang'), timeoutMs: HANG_CLIENT_TIMEOUT_MS });
    console.log(
      `upstream_hang_no_route_timeout: ${describe(hung)} within the client's ${HANG_CLIENT_TIMEOUT_MS / 1000} s`,
    );

    console.log('(e) the last endpoint terminating (a bare pod, preStop sleep: it still serves)');
    for (const [k, v] of Object.entries(await lastEndpoint())) console.log(`${k}: ${v}`);

    console.log('(f) no preStop: what the requests sent during the lag get');
    for (const [k, v] of Object.entries(await noPreStop())) console.log(`${k}: ${v}`);

    console.log('(d) the access log');
    await sleep(1000);
    const lines = (await accessLog()).filter((l) => String(l['request_X-Termlab-Request'] ?? '').startsWith(run));
    for (const l of lines)
      console.log(
        `access_log ${l['request_X-Termlab-Request']}: DownstreamStatus ${l.DownstreamStatus} OriginStatus ${l.OriginStatus} RetryAttempts ${l.RetryAttempts} ServiceAddr ${l.ServiceAddr ?? '-'} Duration ${l.Duration}`,
      );
    const sample = lines.find((l) => String(l['request_X-Termlab-Request']).endsWith('race-post-1'));
    if (sample) console.log(`access_log_line_race_post: ${JSON.stringify(sample)}`);
    const fields = new Set(lines.flatMap((l) => Object.keys(l)));
    console.log(`access_log_fields: ${[...fields].sort().join(' ')}`);
  } finally {
    watch.stop();
    await cleanUp().catch((e) => console.error(`measure:edge: clean-up failed: ${(e as Error).message}`));
  }
}

await runDevTool(tool, main);
