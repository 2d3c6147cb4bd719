// gradeEdge(observation) -> GradeResult: pure, offline, from the file alone. The rollout's own evidence
// checks hold the load's log and the pods' lifecycles; each failed request's cause comes from its own
// sources (harness/edge/attribute.ts: the edge's status and access-log line, the EndpointSlice, the pod's
// TERM), else the rollout's cause at the pod; the model (theory.ts) says which causes must, may and must
// not appear. Outcomes only: no check holds a sub-second time.
import { type AccessLog, byRequestId, type EdgeAccess, parseAccessLog } from '../../edge/access-log.ts';
import {
  attributeAtEdge,
  type EdgeCause,
  type EdgeEvidence,
  type EdgePod,
  type SliceChange,
} from '../../edge/attribute.ts';
import type { EdgeObservation } from '../../observation/edge.ts';
import { ROLLOUT_KIND, ROLLOUT_SCHEMA_VERSION, type RolloutObservation } from '../../observation/rollout.ts';
import { asRollout } from '../../scenario/edge.ts';
import { rulesFor } from '../theory.ts';
import {
  type Check,
  type EdgeGradeSection,
  fail,
  inconclusive,
  pass,
  type RolloutGradeResult,
  verdictOf,
} from '../types.ts';
import { type PodFacts, originOf, podFacts } from '../rollout/facts.ts';
import { attribute, gradeRollout, unclaimedIfStopped } from '../rollout/grade.ts';
import { isFailure, type LoadRecord, parseLoadLog } from '../rollout/records.ts';
import { edgePicture } from './picture.ts';
import { EDGE_IDLE_TIMEOUT_SECONDS, edgeModelInput, type EdgeExpectation, predictEdge } from './theory.ts';

/** The rollout's evidence checks an edge run keeps: the load's log and the pods' lifecycles (the template is one). */
const KEPT_ROLLOUT_CHECKS = new Set([
  'evidence.load-log',
  'evidence.lifecycle-captured',
  'evidence.lifecycle-consistent',
]);

/** The edge observation read as the rollout it ran (the same template before and after). */
export function rolloutView(o: EdgeObservation): RolloutObservation {
  const { edge: _edge, ...rest } = o;
  return { ...rest, schemaVersion: ROLLOUT_SCHEMA_VERSION, kind: ROLLOUT_KIND, scenario: asRollout(o.scenario) };
}

export interface EdgeFailure {
  record: LoadRecord;
  /** The edge's cause, else the rollout's cause at the pod, else 'unattributed'. */
  cause: EdgeCause | string;
  why: string;
  lagSeconds: number | null;
  /** The edge's line for it, and the pod the edge sent it to, where known. */
  access?: EdgeAccess | null;
  pod?: string | null;
}

/** The X-Termlab-Request value of a load line: its own `requestId` (contract C4) or, before that field, its id. */
function accessFor(record: LoadRecord, ids: Map<string, EdgeAccess>, log: AccessLog): EdgeAccess | null {
  if (record.requestId) return ids.get(record.requestId) ?? null;
  return ids.get(record.id) ?? log.entries.find((e) => e.requestId?.endsWith(`-${record.id}`)) ?? null;
}

/** Each endpoint's changes, keyed by its pod's UID where the slice names it (the simulated cluster's pods share an IP). */
function sliceChanges(o: EdgeObservation, wall0: number): SliceChange[] {
  const out: SliceChange[] = [];
  const listed = new Map<string, Set<string>>();
  for (const e of o.evidence.sliceEvents) {
    const at = (Date.parse(e.receivedAt.wall) - wall0) / 1000;
    const now = new Set<string>();
    if (e.type !== 'DELETED')
      for (const ep of e.endpoints) {
        const key = ep.podUid ?? ep.addresses[0];
        if (!key) continue;
        now.add(key);
        out.push({ at, ip: key, gone: false, ready: ep.ready });
      }
    for (const key of listed.get(e.name) ?? []) if (!now.has(key)) out.push({ at, ip: key, gone: true, ready: null });
    listed.set(e.name, now);
  }
  return out;
}

function edgePods(o: EdgeObservation, pods: PodFacts[]): EdgePod[] {
  const ipOf = new Map<string, string>();
  for (const e of o.evidence.sliceEvents)
    for (const ep of e.endpoints) if (ep.podUid && ep.addresses[0]) ipOf.set(ep.podUid, ep.addresses[0]);
  return pods.map((p) => {
    // The port the app said it listens on: what tells pods apart that share an IP.
    const port = (p.log?.lines.find((l) => l.event === 'listening')?.fields as { port?: unknown } | undefined)?.port;
    return {
      name: p.name,
      ip: ipOf.get(p.uid) ?? null,
      port: typeof port === 'number' ? port : null,
      endpoint: p.uid,
      deletion: p.deletionSeen,
      term: p.term,
      exited: p.ended,
      keepAliveTimeoutSeconds: o.scenario.app.keepAliveTimeoutMs / 1000,
    };
  });
}

/** Each failed request's cause from its own sources. */
export function edgeFailures(o: EdgeObservation): {
  failures: EdgeFailure[];
  log: AccessLog;
  records: LoadRecord[];
  evidence: Omit<EdgeEvidence, 'access' | 'accessAt'>;
  wall0: number;
} {
  const view = rolloutView(o);
  const pods = podFacts(view);
  const origin = originOf(view);
  const wall0 = origin?.wall ?? Date.parse(o.run.observedAt);
  const load = parseLoadLog(o.evidence.loadLog);
  const log = parseAccessLog(o.edge.accessLogs.flatMap((l) => l.lines));
  const ids = byRequestId(log);
  const atPod = new Map(attribute(load.records, pods, origin).map((a) => [a.record, a.cause]));
  const base: Omit<EdgeEvidence, 'access' | 'accessAt'> = {
    accessLogRead: o.edge.accessLogs.length > 0,
    idsKept: log.entries.length === 0 || log.entries.some((e) => e.requestId !== null),
    pods: edgePods(o, pods),
    slice: sliceChanges(o, wall0),
    edgeIdleTimeoutSeconds: EDGE_IDLE_TIMEOUT_SECONDS,
  };
  const failures = load.records.filter(isFailure).map((record): EdgeFailure => {
    const rollout = atPod.get(record) ?? 'unattributed';
    if (rollout === 'before the change') return { record, cause: rollout, why: rollout, lagSeconds: null };
    const access = accessFor(record, ids, log);
    const a = attributeAtEdge(
      {
        id: record.id,
        method: record.method ?? o.scenario.load.method,
        due: null,
        sent: (Date.parse(record.sent.time) - wall0) / 1000,
        ended: (Date.parse(record.ended.time) - wall0) / 1000,
        status: record.status,
        body: record.bodyHead ?? null,
        reused: record.reused ?? null,
      },
      {
        ...base,
        access,
        accessAt: access ? { start: (access.startMs - wall0) / 1000, end: (access.endMs - wall0) / 1000 } : null,
      },
    );
    return a.cause
      ? { record, cause: a.cause, why: a.why, lagSeconds: a.lagSeconds, access, pod: a.pod }
      : { record, cause: rollout, why: `${a.why}; at the pod: ${rollout}`, lagSeconds: null, access, pod: a.pod };
  });
  return { failures, log, records: load.records, evidence: base, wall0 };
}

/** The rollout's causes at the pod, as the model groups them (rollout/grade.ts names them). */
const REFUSED_AFTER_TERM = new Set(['draining (503)', 'refused after TERM', 'unanswered after TERM']);
const CUT = new Set(['cut at TERM', 'cut by SIGKILL', 'cut', 'timed out']);
/** A failure no source explains: an answer the edge's line does not account for, or none at all. */
const UNEXPLAINED = new Set(['unattributed', 'http error']);

/** Which failures each of the model's causes counts: the edge's by name, the pod's by the rollout's causes. */
const countsFor = (e: EdgeExpectation, f: EdgeFailure) =>
  e.cause === 'refused after TERM'
    ? REFUSED_AFTER_TERM.has(f.cause)
    : e.cause === 'cut at the pod'
      ? CUT.has(f.cause)
      : f.cause === e.cause;

/** Each cause as the checks name it: what failed, in a few words. */
const CAUSE_WORDS: Record<EdgeExpectation['cause'], string> = {
  'edge-routed-to-removed-endpoint': 'requests the edge still sent to a dropped endpoint',
  'keepalive-closed-by-app': '502s from a kept-alive connection the app closed',
  'no-endpoint-at-edge': '503s from an edge with no endpoint',
  'refused after TERM': 'requests the pod refused after its TERM while still listed',
  'cut at the pod': 'requests cut at the pod itself (at TERM or by SIGKILL)',
};

function causeCheck(e: EdgeExpectation, seen: number): Check {
  const id = `edge.model.${e.cause.replaceAll(' ', '-')}`;
  const name = CAUSE_WORDS[e.cause];
  if (e.exposure === 'expected')
    return seen > 0
      ? pass(id, `the model expects ${name}, and ${seen} were seen (${e.why})`)
      : fail(id, `the model expects ${name} (${e.why}), but none was seen`);
  if (e.exposure === 'none')
    return seen === 0
      ? pass(id, `the model expects no ${name}, and none was seen (${e.why})`)
      : fail(id, `the model expects no ${name} (${e.why}), but ${seen} were seen`);
  return pass(id, `the model allows ${name} (${e.why}); ${seen} seen`);
}

function accessLogCheck(o: EdgeObservation, log: AccessLog, failures: EdgeFailure[]): Check {
  const id = 'evidence.edge-access-log';
  if (log.malformed.length) return fail(id, log.malformed[0]!.problem);
  if (o.edge.accessLogProblem) return inconclusive(id, o.edge.accessLogProblem);
  if (!o.edge.accessLogs.length) return inconclusive(id, "no edge pod's log was recorded");
  if (!log.entries.length)
    return inconclusive(id, `the edge logged no request for ${o.edge.route?.host ?? 'the route'}`);
  const unlogged = failures.filter(
    (f) => f.cause !== 'before the change' && f.why.startsWith('the edge logged no request'),
  );
  if (unlogged.length)
    return inconclusive(
      id,
      `${unlogged.length} failed request(s) have no line in the edge's access log (first: ${unlogged[0]!.record.id}): they failed before the edge had them`,
    );
  return pass(id, `${log.entries.length} access-log lines of this route; every failed request has its own`);
}

function attributedCheck(failures: EdgeFailure[]): Check {
  const id = 'edge.failures-attributed';
  const counted = failures.filter((f) => f.cause !== 'before the change');
  if (!counted.length) return pass(id, 'no request failed');
  const byCause = new Map<string, number>();
  for (const f of counted) byCause.set(f.cause, (byCause.get(f.cause) ?? 0) + 1);
  const summary = [...byCause].map(([c, n]) => `${n} ${c}`).join(', ');
  const open = counted.filter((f) => UNEXPLAINED.has(f.cause));
  if (open.length)
    return inconclusive(
      id,
      `${open.length} failed request(s) have no cause the evidence shows (${summary}); first: ${open[0]!.why}`,
    );
  return pass(id, `${counted.length} failed request(s), each attributed: ${summary}`);
}

export function gradeEdge(
  o: EdgeObservation,
  options: { source?: string } = {},
): RolloutGradeResult & { edge: EdgeGradeSection } {
  const rollout = gradeRollout(rolloutView(o), options);
  if (rollout.kind !== 'rollout') throw new Error('a rollout grade was expected');
  const { failures, log, records, evidence: sources, wall0 } = edgeFailures(o);
  const { rules, minor, note } = rulesFor(o.run.cluster.serverVersion);
  const prediction = predictEdge(edgeModelInput(o.scenario, rules));
  const evidence = unclaimedIfStopped(o.run, [
    ...rollout.checks.filter((c) => KEPT_ROLLOUT_CHECKS.has(c.id)),
    accessLogCheck(o, log, failures),
  ]);
  const seen = prediction.expectations.map((e) => failures.filter((f) => countsFor(e, f)).length);
  const outcome = unclaimedIfStopped(o.run, [
    rollout.checks.find((c) => c.id === 'outcome.run-complete')!,
    attributedCheck(failures),
    ...prediction.expectations.map((e, i) => causeCheck(e, seen[i]!)),
  ]);
  const checks = [...evidence, ...outcome];
  const verdict = verdictOf(evidence, outcome);
  const firstBad = checks.find((c) => c.status === 'fail') ?? checks.find((c) => c.status === 'inconclusive');
  const causes: Record<string, number> = {};
  for (const f of failures) causes[f.cause] = (causes[f.cause] ?? 0) + 1;
  const lags = failures.map((f) => f.lagSeconds).filter((l): l is number => l !== null);
  const edge: EdgeGradeSection = {
    via: o.scenario.via,
    host: o.edge.route?.host ?? null,
    modelLagSeconds: prediction.lagSeconds,
    expectations: prediction.expectations.map((e, i) => ({
      cause: e.cause,
      exposure: e.exposure,
      seen: seen[i]!,
      why: e.why,
    })),
    causes,
    measuredLagSeconds: lags.length ? Math.max(...lags) : null,
    edgeRetried: log.entries.filter((e) => e.retries > 0).length,
    picture: edgePicture(failures, log, sources, wall0),
  };
  const causeOf = new Map(failures.map((f) => [f.record, f.cause]));
  const total = rollout.rollout.requests.total;
  return {
    ...rollout,
    labPair: o.scenario.labPair ?? null,
    mode: `${o.scenario.pods.mode}, app keep-alive ${o.scenario.app.keepAlive}`,
    outcome: `${failures.filter((f) => f.cause !== 'before the change').length} of ${total} requests failed through the edge`,
    verdict,
    explanation:
      verdict === 'matches-model' || !firstBad
        ? "the requests through the edge failed as the model predicts from the edge's lag, the app's keep-alive and the pods' budget"
        : firstBad.reason,
    notes: note ? [note] : [],
    checks,
    rollout: {
      ...rollout.rollout,
      exposure: prediction.failures,
      rules: { minor, source: rules.source },
      steps: [`the kubelet's rules of Kubernetes ${minor} (${rules.source})`, ...prediction.steps],
      causes,
      points: rollout.rollout.points.map((p, i) => {
        const record = records[i];
        return record && causeOf.has(record) ? { ...p, outcome: causeOf.get(record)! } : p;
      }),
    },
    edge,
  };
}
