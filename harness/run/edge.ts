// One edge scenario: its rollout (rollout.ts), with the Service published at the edge by a route of its
// own, the app's keep-alive variant on the pods, the load sent to the edge's Service with the route's Host
// on kept-alive connections, and every edge pod's access-log lines of that Host followed as evidence.
import type { Cluster } from '../kube/index.ts';
import { createRoute, deleteRoute, listPods, readGateway, readService } from '../kube/index.ts';
import { EDGE_KIND, EDGE_SCHEMA_VERSION, type EdgeObservation, type EdgeSection } from '../observation/edge.ts';
import { asRollout, type EdgeScenario } from '../scenario/edge.ts';
import {
  EDGE_GATEWAY,
  EDGE_POD_SELECTOR,
  EDGE_SERVICE,
  renderRoute,
  routeHost,
  withAppKeepAlive,
  withEdgeLoad,
} from '../scenario/render-edge.ts';
import { TermlabError } from '../../lib/errors.ts';
import type { Cleaner } from './cleaner.ts';
import { LogFollower } from './logs.ts';
import type { ScenarioContext } from './phases.ts';
import { type RolloutExtension, runRollout } from './rollout.ts';

/** The edge's log is read from this long before the route exists: the node's and the harness's clocks differ. */
const LOG_SINCE_MARGIN_MS = 5_000;

interface EdgeState {
  section: EdgeSection;
  followers: { pod: string; uid: string; ip: string | null; follower: LogFollower }[];
}

/** The access-log fields termlab reads (contract C2): the rest of Traefik's 40-odd fields is left out of the file. */
const KEPT_FIELDS = [
  'StartUTC',
  'Duration',
  'DownstreamStatus',
  'OriginStatus',
  'RequestMethod',
  'RequestPath',
  'RequestHost',
  'ServiceAddr',
  'ServiceURL',
  'RouterName',
  'RetryAttempts',
];
const REQUEST_ID = 'request_x-termlab-request';

/**
 * This route's access-log line with only the fields termlab reads, or null for any other line (another route's,
 * Traefik's general log). A line of every field is ~1.3 KB: at thousands of requests the file would pass its limit.
 */
export function routeAccessLine(text: string, host: string): string | null {
  if (!text.startsWith('{') || !text.includes(host)) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const requestHost = typeof json.RequestHost === 'string' ? json.RequestHost.split(':')[0] : null;
  if (requestHost !== host) return null;
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) if (KEPT_FIELDS.includes(k) || k.toLowerCase() === REQUEST_ID) kept[k] = v;
  return JSON.stringify(kept);
}

async function followEdgePods(ctx: ScenarioContext, state: EdgeState, cleaner: Cleaner): Promise<void> {
  const { cluster, clock } = ctx;
  const ns = EDGE_GATEWAY.namespace;
  const pods = (await listPods(cluster, ns, { labelSelector: EDGE_POD_SELECTOR }, { signal: ctx.signal })).items;
  const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  if (!running.length) {
    state.section.accessLogProblem = `no running edge pod (${EDGE_POD_SELECTOR}) in ${ns}: no access log`;
    return;
  }
  const since = new Date(Date.now() - LOG_SINCE_MARGIN_MS).toISOString();
  for (const pod of running) {
    const follower = new LogFollower();
    const name = pod.metadata!.name!;
    state.followers.push({ pod: name, uid: pod.metadata!.uid!, ip: pod.status?.podIP ?? null, follower });
    cleaner.defer(`stop the access-log follow of ${ns}/${name}`, async () => {
      if (!follower.ended) follower.stop();
      return 'skipped';
    });
    try {
      await follower.start(cluster, ns, name, pod.spec?.containers?.[0]?.name ?? 'traefik', clock, since);
    } catch (error) {
      state.section.accessLogProblem = `the log of edge pod ${ns}/${name} could not be followed: ${(error as Error).message}`;
    }
  }
}

/** Where the load pod reaches the edge: its Service's ClusterIP:80; the simulated cluster's way in is the node port. */
async function edgeTarget(ctx: ScenarioContext, state: EdgeState): Promise<string> {
  const ns = EDGE_GATEWAY.namespace;
  const service = await readService(ctx.cluster, ns, EDGE_SERVICE.name, { signal: ctx.signal });
  if (!service)
    throw new TermlabError(
      'EDGE_NOT_FOUND',
      `the edge's Service ${ns}/${EDGE_SERVICE.name} is not there: install the edge (manifests/edge/traefik.yaml; docs/edge.md)`,
    );
  const clusterIP = service.spec?.clusterIP ?? null;
  state.section.service = { namespace: ns, name: EDGE_SERVICE.name, clusterIP, port: EDGE_SERVICE.port };
  const port = service.spec?.ports?.find((p) => p.port === EDGE_SERVICE.port) ?? service.spec?.ports?.[0];
  if (ctx.simulated) {
    const hostIP = state.followers[0] ? await hostIPOf(ctx.cluster, ns, state.followers[0].pod) : null;
    return `http://${hostIP ?? '127.0.0.1'}:${port?.nodePort}`;
  }
  return `http://${clusterIP}:${EDGE_SERVICE.port}`;
}

async function hostIPOf(cluster: Cluster, ns: string, pod: string): Promise<string | null> {
  const list = await listPods(cluster, ns, { fieldSelector: `metadata.name=${pod}` });
  return list.items[0]?.status?.hostIP ?? null;
}

export async function runEdge(ctx: ScenarioContext, scenario: EdgeScenario): Promise<EdgeObservation> {
  const state: EdgeState = {
    section: {
      via: scenario.via,
      route: null,
      gateway: null,
      service: null,
      accessLogs: [],
      accessLogProblem: null,
    },
    followers: [],
  };
  let host = '';
  const ext: RolloutExtension = {
    async afterService({ name, cleaner, expiresAt }) {
      const { cluster, namespace } = ctx;
      host = routeHost(name);
      if (scenario.via === 'httproute') {
        const gw = await readGateway(cluster, EDGE_GATEWAY.namespace, EDGE_GATEWAY.name, { signal: ctx.signal });
        if (!gw)
          throw new TermlabError(
            'EDGE_NOT_FOUND',
            `the Gateway ${EDGE_GATEWAY.namespace}/${EDGE_GATEWAY.name} is not there: install the edge (manifests/edge/traefik.yaml; docs/edge.md)`,
          );
        state.section.gateway = {
          ...EDGE_GATEWAY,
          addresses: ((gw.status?.addresses ?? []) as { value?: string }[]).map((a) => a.value ?? '').filter(Boolean),
        };
      }
      const route = await createRoute(
        cluster,
        namespace,
        scenario.via,
        renderRoute(scenario, { name, owner: ctx.owner, runId: ctx.runId, env: ctx.env, expiresAt }),
        { signal: ctx.signal },
      );
      const uid = route.metadata?.uid ?? '';
      state.section.route = { kind: scenario.via === 'httproute' ? 'HTTPRoute' : 'Ingress', name, uid, host };
      cleaner.defer(`delete ${scenario.via}`, async () =>
        (await deleteRoute(cluster, namespace, scenario.via, name, uid)) === 'gone' ? 'gone' : 'done',
      );
      await followEdgePods(ctx, state, cleaner);
    },
    podTemplate: (t) => withAppKeepAlive(t, scenario),
    loadPod: (p) => withEdgeLoad(p, scenario, host),
    target: () => edgeTarget(ctx, state),
  };
  const rollout = await runRollout(ctx, asRollout(scenario), ext);
  state.section.accessLogs = state.followers.map(({ pod, uid, ip, follower }) => ({
    pod,
    uid,
    ip,
    lines: follower.lines.flatMap((l) => {
      const text = routeAccessLine(l.text, host);
      return text === null ? [] : [{ ...l, text }];
    }),
    // The edge outlives the run: its stream is stopped by the harness, never ended by the container.
    ended: follower.error === null,
    error: follower.error,
  }));
  return {
    ...rollout,
    schemaVersion: EDGE_SCHEMA_VERSION,
    kind: EDGE_KIND,
    scenario,
    edge: state.section,
  };
}
