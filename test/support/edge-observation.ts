// Hand-made edge evidence on a real timeline: the recorded rollout of the project's node (old pods with
// no preStop, requests through the Service refused after TERM) retold as if its load had gone through the
// edge. Each request gets the access-log line Traefik would write for it (JSON, its X-Termlab-Request),
// sent to the pod that answered it or, for a failed one, to the terminating pod the Service still held:
// a 502 with nothing from the pod. The EndpointSlice, the pods' TERM and logs stay as recorded.
import { readFileSync } from 'node:fs';
import { attribute } from '../../harness/grade/rollout/grade.ts';
import { originOf, podFacts } from '../../harness/grade/rollout/facts.ts';
import { parseLoadLog } from '../../harness/grade/rollout/records.ts';
import { EDGE_KIND, EDGE_SCHEMA_VERSION, type EdgeObservation } from '../../harness/observation/edge.ts';
import { type RolloutObservation, RolloutObservationSchema } from '../../harness/observation/rollout.ts';
import { type EdgeScenario, EdgeScenarioSchema } from '../../harness/scenario/edge.ts';

const FIXTURE = new URL('../grade/fixtures/rollout/node-rollout-adds-prestop.observation.json', import.meta.url);
const HOST = 'tl-edge-4740.edge.termlab.test';

export interface EdgeSetup {
  name: string;
  preStopSeconds: number;
  keepAlive: 'polite' | 'naive';
  method: 'GET' | 'POST';
  role?: 'no-prestop' | 'sleep-outlasts-lag';
}

export const SETUPS = {
  a: { name: 'edge-no-prestop', preStopSeconds: 0, keepAlive: 'polite', method: 'GET', role: 'no-prestop' },
  b: { name: 'edge-short-sleep', preStopSeconds: 1, keepAlive: 'polite', method: 'GET' },
  c: {
    name: 'edge-sleep-outlasts-lag',
    preStopSeconds: 5,
    keepAlive: 'polite',
    method: 'GET',
    role: 'sleep-outlasts-lag',
  },
  d: { name: 'edge-naive-post', preStopSeconds: 5, keepAlive: 'naive', method: 'POST' },
} as const satisfies Record<string, EdgeSetup>;

export function edgeScenario(s: EdgeSetup): EdgeScenario {
  return EdgeScenarioSchema.parse({
    kind: 'edge',
    name: s.name,
    replicas: 3,
    maxSurge: 1,
    maxUnavailable: 0,
    terminationGracePeriodSeconds: 30,
    pods: {
      mode: 'graceful',
      preStop: s.preStopSeconds ? { kind: 'exec-sleep', seconds: s.preStopSeconds } : { kind: 'none' },
    },
    app: { keepAlive: s.keepAlive, keepAliveTimeoutMs: 5000 },
    via: 'httproute',
    load: { rate: 50, workMs: 200, connections: 32, durationMs: 90000, keepAlive: true, method: s.method },
    changeAfterMs: 3000,
    ...(s.role ? { labPair: { id: 'edge', role: s.role } } : {}),
  });
}

export const recordedRollout = (): RolloutObservation =>
  RolloutObservationSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

interface Options {
  /** Leave the failed requests out (and out of the load's tally): the run where none failed. */
  dropFailures?: boolean;
  /** Turn this many requests of the rollout answered before the first TERM into 502s from a connection the app closed. */
  raceBeforeTerm?: number;
}

/** The recorded rollout as an edge observation of this setup. */
export function edgeObservation(setup: EdgeSetup, options: Options = {}): EdgeObservation {
  const rollout = recordedRollout();
  const pods = podFacts(rollout);
  const origin = originOf(rollout);
  const load = parseLoadLog(rollout.evidence.loadLog);
  const blamed = new Map(attribute(load.records, pods, origin).map((a) => [a.record.id, a.pods[0] ?? null]));
  const ipOf = new Map<string, string>();
  for (const e of rollout.evidence.sliceEvents)
    for (const ep of e.endpoints) if (ep.podUid && ep.addresses[0]) ipOf.set(ep.podUid, ep.addresses[0]);
  const firstTerm = Math.min(...pods.map((p) => p.termWall ?? Infinity));
  let raced = 0;
  const access: string[] = [];
  let dropped = 0;
  const loadLines = rollout.evidence.loadLog!.lines.flatMap((line) => {
    const json = JSON.parse(line.text) as Record<string, any>;
    if (json.event === 'load-end' && options.dropFailures) {
      json.sent -= dropped;
      json.failed -= dropped;
      return [{ ...line, text: JSON.stringify(json) }];
    }
    if (json.event !== 'request') return [line];
    const failed = json.outcome !== 'completed';
    if (failed && options.dropFailures) {
      dropped++;
      return [];
    }
    // Within the rollout, before any TERM: the pod still listed, its connection closed under the request.
    const race =
      !failed &&
      raced < (options.raceBeforeTerm ?? 0) &&
      Date.parse(json.sent.time) > origin!.wall &&
      Date.parse(json.ended.time) < firstTerm;
    if (race) raced++;
    const bad = failed || race;
    const podUid = failed ? blamed.get(json.id) : json.podUid;
    const ip = podUid ? ipOf.get(podUid) : undefined;
    access.push(
      JSON.stringify({
        StartUTC: json.sent.time,
        Duration: Math.round((Date.parse(json.ended.time) - Date.parse(json.sent.time)) * 1e6),
        DownstreamStatus: bad ? 502 : json.status,
        ...(bad ? {} : { OriginStatus: json.status }),
        RequestMethod: setup.method,
        RequestPath: '/work',
        RequestHost: HOST,
        ...(ip ? { ServiceAddr: `${ip}:8080` } : {}),
        RouterName: 'httproute-tl-edge-4740-gw-termlab-edge-edge-ep-web-0',
        RetryAttempts: 0,
        'request_X-Termlab-Request': json.id,
      }),
    );
    if (!bad) return [line];
    // What the load sees of a 502 from the edge: an answer, not a refused connection.
    const edged = {
      ...json,
      outcome: 'http-error',
      status: 502,
      errorCode: null,
      stage: null,
      connectedAt: json.sent,
      headersAt: json.ended,
      podUid: null,
    };
    return [{ ...line, text: JSON.stringify(edged) }];
  });
  if (options.raceBeforeTerm) {
    const end = loadLines.findIndex((l) => l.text.includes('"load-end"'));
    const json = JSON.parse(loadLines[end]!.text);
    json.completed -= raced;
    json.failed += raced;
    loadLines[end] = { ...loadLines[end]!, text: JSON.stringify(json) };
  }
  const wall = rollout.timeline.loadPodCreated!;
  return {
    ...rollout,
    schemaVersion: EDGE_SCHEMA_VERSION,
    kind: EDGE_KIND,
    scenario: edgeScenario(setup),
    evidence: { ...rollout.evidence, loadLog: { ...rollout.evidence.loadLog!, lines: loadLines } },
    edge: {
      via: 'httproute',
      route: { kind: 'HTTPRoute', name: 'tl-edge-4740', uid: 'route-uid', host: HOST },
      gateway: { namespace: 'termlab-edge', name: 'edge', addresses: [] },
      service: { namespace: 'termlab-edge', name: 'traefik', clusterIP: '10.96.0.80', port: 80 },
      accessLogs: [
        {
          pod: 'traefik-5d9f7c-abcde',
          uid: 'traefik-uid',
          ip: '10.244.0.9',
          lines: access.map((text) => ({ receivedAt: wall, apiTime: null, text })),
          ended: true,
          error: null,
        },
      ],
      accessLogProblem: null,
    },
  };
}
