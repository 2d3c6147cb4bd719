// gradeVerification(observation) -> VerifyGrade: pure, offline, from the file alone. Each failed
// request gets one of four causes from the evidence (the pod's deletion and TERM, its endpoint's
// serving state), then the advice from the measured figures, never claiming more than was seen.
import { z } from 'zod';
import { EXIT } from '../../lib/errors.ts';
import { PROXY_PROPAGATION_SECONDS } from '../grade/rollout/theory.ts';
import { isFailure, type LoadLog, parseLoadLog } from '../grade/rollout/records.ts';
import { parseLabLogLines } from '../grade/sources.ts';
import { TOLERANCE_SECONDS } from '../grade/theory.ts';
import { deletedByTheAct, type PodTimes, podTimes, timeOriginOf } from './facts.ts';
import type { VerificationObservation } from '../observation/verification.ts';
import { incompleteReasonOf, wasInterrupted } from '../observation/incomplete.ts';
import { type EdgeGrade, gradeEdge } from './edge-grade.ts';
import { fmt, p99, round1 } from './figures.ts';

export const CAUSES = {
  1: 'sent to a terminating pod still in the endpoints',
  2: "in flight at the pod's TERM or KILL",
  3: 'refused or reset after the pod left the endpoints',
  4: 'nothing terminating at that moment',
} as const;
export type CauseNumber = 1 | 2 | 3 | 4;

export const FailedRequestSchema = z.object({
  id: z.string(),
  sent: z.number(),
  reached: z.number(),
  ended: z.number(),
  outcome: z.string(),
  errorCode: z.string().nullable(),
  stage: z.string().nullable(),
  pod: z.string().nullable(),
  cause: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]),
  why: z.string(),
});
export type FailedRequest = z.infer<typeof FailedRequestSchema>;

export interface VerifyGrade {
  deployment: string;
  namespace: string;
  action: string;
  source: string;
  verdict: 'pass' | 'fail' | 'inconclusive';
  /** Why, in one sentence. */
  explanation: string;
  requests: number;
  completed: number;
  failed: number;
  maxFailed: number;
  byCause: Record<CauseNumber, number>;
  terminations: number;
  failures: FailedRequest[];
  pods: PodTimes[];
  advice: string[];
  /** The measured figures each piece of advice stands on. */
  reasoning: string[];
  /** The rollout verify started did not complete (progressDeadlineSeconds, or verify's own bound): the Deployment was left mid-rollout. */
  rolloutStalled: boolean;
  /** The user stopped the run (Ctrl-C): inconclusive whatever failed, exit 130. */
  interrupted: boolean;
  /** "one run is not all traffic": what this run exercised. */
  scope: string;
  /** Through an edge (--via, --url): each failure's cause there, the edge's lag, its advice; null without one. */
  edge: EdgeGrade | null;
  problems: string[];
}

/**
 * A second's slack for the app's clock against the load pod's: an earlier run's last request was accepted well
 * before this run's load pod was even made.
 */
const EARLIER_RUN_SLACK_MS = 1000;

/**
 * The request ids each pod's own log says it accepted (the lab image writes them; most apps do not). Only from
 * this run's load on: a pod an earlier verify made served that run's requests, whose ids (L1, L2, …) repeat.
 */
function acceptedIds(o: VerificationObservation, load: LoadLog): { ids: Map<string, string>; logging: Set<string> } {
  const ids = new Map<string, string>();
  const logging = new Set<string>();
  const loadStart = Date.parse(load.start?.time ?? '');
  const thisRun = (time: string) => !Number.isFinite(loadStart) || Date.parse(time) >= loadStart - EARLIER_RUN_SLACK_MS;
  for (const log of o.evidence.podLogs) {
    for (const l of parseLabLogLines(log.lines).lines)
      if (l.event === 'accepted' && typeof l.fields.id === 'string' && thisRun(l.time)) {
        ids.set(l.fields.id, log.uid);
        logging.add(log.uid);
      }
    // A log that ran to the container's end says every request the pod took; a cut one does not.
    if (!log.ended) logging.delete(log.uid);
  }
  return { ids, logging };
}

interface Sent {
  id: string;
  sent: number;
  connected: number | null;
  ended: number;
  outcome: string;
  stage: string | null;
  header: string | null;
}

/**
 * How far apart two times may be and still count as one moment: the request's times are the load pod's clock,
 * TERM and exit the app's, deletion the watch's; below the 0.1 s every time is shown at, so that a cause never
 * contradicts the times printed beside it.
 */
export const SAME_MOMENT_SECONDS = 0.05;

/** Added to the longest propagation a run measured before it becomes a preStop sleep: one run is not the worst. */
export const SLEEP_MARGIN_SECONDS = 1;

/** Which pod a request reached and why it failed: by the app's own log or answer header, else by time. */
function attribute(
  r: Sent,
  pods: PodTimes[],
  { ids: accepted, logging }: ReturnType<typeof acceptedIds>,
): Omit<FailedRequest, 'id' | 'sent' | 'reached' | 'ended' | 'outcome' | 'errorCode' | 'stage'> {
  const slack = SAME_MOMENT_SECONDS;
  const byUid = (uid: string | null | undefined) =>
    uid ? (pods.find((p) => p.uid === uid || p.name === uid) ?? null) : null;
  const took = byUid(accepted.get(r.id));
  const named = took ?? byUid(r.header);
  // When it reached a pod: its connection (a proxy in between may accept and then reset it).
  const reached = r.connected ?? r.sent;
  // 2: the app had it (its log or its answer says so), or it was connected before the pod's TERM
  // and failed once the pod stopped — unless that pod's whole log names every request it took and
  // not this one (a proxy in between accepted it, not the app). The pod's TERM (or exit) must fall
  // while the request was open: one that came after it ended did not cut it.
  // A 503 is the app refusing new work while it drains: sent to a terminating pod (1 or 3), not cut.
  if (r.outcome === 'rejected') return terminatingCause(r, reached, named, pods);
  const answered = r.stage === 'body' || r.outcome === 'cut' || took !== null;
  const open = (t: number | null): t is number => t !== null && reached < t + slack && t <= r.ended + slack;
  let inFlight: { pod: PodTimes; what: string } | null = null;
  if (answered && named) {
    if (named.killed && open(named.exited))
      inFlight = { pod: named, what: `its KILL (exit 137) at ${fmt(named.exited)}` };
    else if (open(named.term)) inFlight = { pod: named, what: `its TERM at ${fmt(named.term)}` };
    else if (open(named.exited)) inFlight = { pod: named, what: `its exit at ${fmt(named.exited)}` };
  } else if (!answered && r.stage === 'request') {
    const pod = (named ? [named] : pods.filter((p) => p.old)).find(
      (p) => !logging.has(p.uid) && p.term !== null && reached < p.term && p.term <= r.ended + slack,
    );
    if (pod) inFlight = { pod, what: pod.killed ? `its KILL (exit 137)` : `its TERM at ${fmt(pod.term!)}` };
  }
  if (inFlight)
    return {
      pod: inFlight.pod.name,
      cause: 2,
      why: `${took ? `${inFlight.pod.name}'s log shows it accepted; ` : ''}open from ${fmt(reached)} to ${fmt(r.ended)} across ${inFlight.what}`,
    };
  return terminatingCause(r, reached, named, pods);
}

/**
 * 1, 3 or 4: the pod that was terminating when it reached it (the one that began last before it), else one whose
 * first sign of terminating came while it was open; a pod first seen terminating after the request ended did not
 * have it terminating, and is named only to say so.
 */
function terminatingCause(
  r: Sent,
  reached: number,
  named: PodTimes | null,
  pods: PodTimes[],
): Omit<FailedRequest, 'id' | 'sent' | 'reached' | 'ended' | 'outcome' | 'errorCode' | 'stage'> {
  const tol = TOLERANCE_SECONDS;
  const slack = SAME_MOMENT_SECONDS;
  const already = (p: PodTimes) => p.terminating! <= reached + slack;
  const near = (named ? [named] : pods).filter(
    (p) => p.terminating !== null && (p.gone === null || reached <= p.gone + PROXY_PROPAGATION_SECONDS + tol),
  );
  const pod = near
    .filter((p) => p.terminating! <= r.ended + slack)
    .sort((a, b) =>
      already(a) !== already(b)
        ? already(a)
          ? -1
          : 1
        : already(a)
          ? b.terminating! - a.terminating!
          : a.terminating! - b.terminating!,
    )[0];
  if (!pod) {
    // Nothing seen terminating before it failed. A termination first seen just after is told, not taken.
    const next = near
      .filter((p) => p.terminating! > r.ended + slack && p.terminating! <= r.ended + tol)
      .sort((a, b) => a.terminating! - b.terminating!)[0];
    const after = next
      ? `; ${next.name} was first seen terminating at ${fmt(next.terminating!)}, after it failed at ${fmt(r.ended)}: the evidence does not say it had begun earlier`
      : '';
    return {
      pod: named?.name ?? null,
      cause: 4,
      why: named
        ? `answered by ${named.name}, which was not seen terminating until it failed${after}`
        : `no pod was seen terminating by the time it failed at ${fmt(r.ended)}${after}`,
    };
  }
  const d = reached - pod.terminating!;
  const since =
    d >= -slack
      ? `${fmt(Math.max(0, d))} after ${pod.name} began terminating`
      : `at ${fmt(reached)}, ${fmt(-d)} before the first sign of ${pod.name} terminating (${fmt(pod.terminating!)}), which came while it was open (it failed at ${fmt(r.ended)})`;
  if (pod.endpointNotReady === null || reached < pod.endpointNotReady)
    return { pod: pod.name, cause: 1, why: `reached a pod ${since}, while the EndpointSlice still listed it ready` };
  const after = reached - pod.endpointNotReady;
  if (after <= PROXY_PROPAGATION_SECONDS + tol)
    return {
      pod: pod.name,
      cause: 1,
      why: `reached a pod ${since}, ${fmt(after)} after the EndpointSlice dropped it: the proxies had not caught up`,
    };
  return {
    pod: pod.name,
    cause: 3,
    why: `reached a pod ${fmt(after)} after ${pod.name} left the endpoints (past the proxies' ${PROXY_PROPAGATION_SECONDS}s): a kept connection or a late proxy`,
  };
}

/**
 * Whether verify's own cause (from the load's times and the pods) stands for a request that went through an edge:
 * not when the edge decided it, nor when the edge was read and never had it (it failed between the load and the
 * edge, so which pod it would have reached is unknown); yes when the edge cannot be read (--url), or when the
 * edge sent it to a pod and the pod's side is what failed.
 */
export function ownCauseApplies(edge: EdgeGrade | null, f: EdgeGrade['findings'][number] | undefined): boolean {
  if (!edge || !f) return true;
  if (f.cause !== null) return false;
  return (
    !edge.readable || !(f.why.startsWith('the edge logged no request') || f.why.startsWith("the edge's lines carry no"))
  );
}

/** Past this, sends that fell behind the steady schedule are said so (the load did not run at --rate). */
const BEHIND_MS = 1000;

/** The rate the load ran at, as sent: `--rate`, or how far it fell behind (all connections busy, or a starved load pod). */
function paceOf(
  records: ReturnType<typeof parseLoadLog>['records'],
  request: VerificationObservation['request'],
): string {
  const late = records.reduce((m, r) => Math.max(m, r.sent.mono - r.dueMono), 0);
  if (late <= BEHIND_MS || records.length < 2) return `${request.rate}/s`;
  const sent = records.map((r) => r.sent.mono);
  const span = (Math.max(...sent) - Math.min(...sent)) / 1000;
  return `${span > 0 ? round1((records.length - 1) / span) : '?'}/s, not the ${request.rate}/s asked (sends fell up to ${fmt(late / 1000)} behind: at most ${request.connections} were open at once, --connections)`;
}

export function gradeVerification(o: VerificationObservation, options: { source?: string } = {}): VerifyGrade {
  const problems: string[] = [];
  const load = parseLoadLog(o.evidence.loadLog);
  if (load.malformed.length) problems.push(`load log line ${load.malformed[0]!.line}: ${load.malformed[0]!.problem}`);
  const origin = timeOriginOf(o);
  const at = (wall: string) => (Date.parse(wall) - origin) / 1000;
  const pods = podTimes(o);
  const accepted = acceptedIds(o, load);
  const failures: FailedRequest[] = load.records.filter(isFailure).map((r) => {
    const sent = at(r.sent.time),
      ended = at(r.ended.time);
    const why = attribute(
      {
        id: r.id,
        sent,
        connected: r.connectedAt ? at(r.connectedAt.time) : null,
        ended,
        outcome: r.outcome,
        stage: r.stage,
        header: r.podUid,
      },
      pods,
      accepted,
    );
    return {
      id: r.id,
      sent: round1(sent),
      reached: round1(r.connectedAt ? at(r.connectedAt.time) : sent),
      ended: round1(ended),
      outcome: r.outcome,
      errorCode: r.errorCode,
      stage: r.stage,
      ...why,
    };
  });
  const byCause: Record<CauseNumber, number> = { 1: 0, 2: 0, 3: 0, 4: 0 };
  for (const f of failures) byCause[f.cause]++;
  const terminations = pods.filter(deletedByTheAct).length;
  const failedRecords = load.records.filter(isFailure);
  const edge = gradeEdge(
    o,
    failedRecords.map((r) => ({
      id: r.id,
      sent: at(r.sent.time),
      ended: at(r.ended.time),
      due: null,
      record: r,
    })),
    pods,
    origin,
  );
  if (edge) problems.push(...edge.problems);
  // What the edge decided is advised from the edge's figures; verify's own advice covers the rest.
  const decided = new Set(edge?.findings.filter((f) => !ownCauseApplies(edge, f)).map((f) => f.id));
  const own = adviceFor(
    o,
    pods,
    failures.filter((f) => !decided.has(f.id)),
    failures.length > 0,
  );
  // One sleep advised: the edge's, from its lag, where it gave one (kube-proxy's figures do not bound the edge).
  const edgeSleep = edge?.advice.some((a) => a.includes('preStop'));
  const advice = [...(edge?.advice ?? []), ...own.advice.filter((a) => !(edgeSleep && a.includes('preStop')))];
  const reasoning = [...(edge?.reasoning ?? []), ...own.reasoning];
  const requests = load.records.length;
  const completed = requests - failures.length;
  const maxFailed = o.request.maxFailed;
  const interrupted = wasInterrupted(o.run);
  let verdict: VerifyGrade['verdict'];
  let explanation: string;
  if (!o.evidence.loadLog || !load.start) {
    verdict = 'inconclusive';
    explanation = `no load was recorded${o.run.incompleteReason ? `: ${o.run.incompleteReason}` : ''}`;
  } else if (interrupted) {
    // The user stopped it: what it saw up to then is shown, but judged neither way (exit 130, as the run's).
    verdict = 'inconclusive';
    explanation = `${incompleteReasonOf(o.run)}: an interrupted run is neither a pass nor a fail (${failures.length} of ${requests} requests had failed when it stopped)`;
  } else if (!o.acted) {
    // Nothing was rolled or deleted: whatever failed, no termination was tested.
    verdict = 'inconclusive';
    explanation = `it stopped before changing anything, so no termination was tested: ${incompleteReasonOf(o.run)}`;
  } else if (failures.length > maxFailed) {
    verdict = 'fail';
    explanation = `${failures.length} of ${requests} requests failed (at most ${maxFailed} allowed)`;
  } else if (!o.run.complete) {
    verdict = 'inconclusive';
    explanation = `the run did not complete: ${incompleteReasonOf(o.run)}${o.progressCondition ? ` (the Deployment: ${o.progressCondition})` : ''}`;
  } else if (problems.length) {
    verdict = 'inconclusive';
    explanation = problems[0]!;
  } else if (terminations === 0) {
    verdict = 'inconclusive';
    explanation = 'no pod terminated during the load: nothing was exercised';
  } else {
    verdict = 'pass';
    explanation = `${failures.length} of ${requests} requests failed (at most ${maxFailed} allowed)`;
  }
  const scope = `this run exercised ${requests} requests at ${paceOf(load.records, o.request)} across ${terminations} pod termination(s); one run is not all traffic: a pass says these requests did not fail, not that none ever will`;
  return {
    deployment: o.request.deployment,
    namespace: o.request.namespace,
    action: o.request.action,
    source: options.source ?? '',
    verdict,
    explanation,
    requests,
    completed,
    failed: failures.length,
    maxFailed,
    byCause,
    terminations,
    failures,
    pods,
    advice,
    reasoning,
    // Set only where the wait for the rollout ended without it (run.ts): the condition quoted then.
    rolloutStalled: o.progressCondition !== null,
    interrupted,
    scope,
    edge,
    problems,
  };
}

function adviceFor(
  o: VerificationObservation,
  pods: PodTimes[],
  failures: FailedRequest[],
  anyFailed = failures.length > 0,
): { advice: string[]; reasoning: string[] } {
  const advice: string[] = [];
  const reasoning: string[] = [];
  const byName = new Map(pods.map((p) => [p.name, p]));
  const deleted = pods.filter((p) => p.deletion !== null);
  // How long after each deletion its endpoint left the slice (the controller's share), and how long
  // requests still reached it (the proxies' share too): the preStop sleep must cover the latter.
  const sliceLag = deleted.filter((p) => p.endpointNotReady !== null).map((p) => p.endpointNotReady! - p.deletion!);
  if (sliceLag.length)
    reasoning.push(
      `the EndpointSlice marked each deleted pod not ready ${fmt(Math.min(...sliceLag))}–${fmt(Math.max(...sliceLag))} after its deletion (p99 ${fmt(p99(sliceLag))}, ${sliceLag.length} pod(s))`,
    );
  const records = parseLoadLog(o.evidence.loadLog)
    .records.filter((r) => r.outcome === 'completed')
    .map((r) => (Date.parse(r.ended.time) - Date.parse(r.sent.time)) / 1000);
  const longest = records.length ? Math.max(...records) : 0;
  if (records.length) reasoning.push(`the longest completed request took ${fmt(longest)} (p99 ${fmt(p99(records))})`);
  // New connections that still reached a terminating pod: cause 1, and cause 3 refused at connect (a late proxy, no kept connection).
  const lateProxy = failures.filter((f) => f.cause === 3 && f.stage === 'connect');
  const c1 = failures.filter(
    (f) =>
      (f.cause === 1 || (f.cause === 3 && f.stage === 'connect')) && f.pod && byName.get(f.pod)?.terminating !== null,
  );
  if (c1.length) {
    const reach = c1.map((f) => Math.max(0, f.reached - byName.get(f.pod!)!.terminating!));
    // The sleep follows from the figure it quotes: that figure as shown (to 0.1 s), plus the margin, rounded up.
    const y = round1(Math.max(...reach, ...sliceLag, 0));
    const x = Math.ceil(y + SLEEP_MARGIN_SECONDS);
    const derived = `${fmt(y)} + a ${SLEEP_MARGIN_SECONDS}s margin (one run does not see every proxy at its slowest), rounded up to a whole second, is ${x}s`;
    const current = Math.max(0, ...deleted.map((p) => p.preStopSleepSeconds ?? 0));
    reasoning.push(
      `requests still reached a terminating pod up to ${fmt(Math.max(...reach))} after it began terminating (p99 ${fmt(p99(reach))}; ${c1.length - lateProxy.length} failed request(s) of cause 1${lateProxy.length ? ` and ${lateProxy.length} of cause 3 refused at connect` : ''})`,
    );
    // A sleep that already covers the measured propagation is not what failed: saying "lengthen 5s to 3s" would mislead.
    if (current >= x)
      advice.push(
        `the preStop sleep (${current}s) already covers the ${fmt(y)} endpoint removal took to reach the proxies here (${derived}), yet requests to terminating pods failed inside it: look at the app and the node's load (a starved pod or proxy), not the sleep`,
      );
    else
      advice.push(
        `${current ? `lengthen the preStop sleep from ${current}s to at least` : 'add `preStop: sleep` of at least'} ${x}s — endpoint removal reached the proxies up to ${fmt(y)} after each deletion here, and the pod stopped listening before that: ${derived}`,
      );
    const grace = Math.min(...deleted.map((p) => p.grace ?? 30));
    const need = Math.ceil(x + longest);
    if (grace < need)
      advice.push(
        `\`terminationGracePeriodSeconds\` of at least ${need}s (hook ${x}s + your longest request ${fmt(longest)}); it is ${grace}s now`,
      );
  }
  const c2 = failures.filter((f) => f.cause === 2);
  if (c2.length) {
    const pod2 = [...new Set(c2.map((f) => f.pod).filter((p): p is string => p !== null))]
      .map((n) => byName.get(n)!)
      .filter(Boolean);
    const killed = pod2.filter((p) => p.killed);
    const quick = pod2
      .filter((p) => !p.killed && p.term !== null && p.exited !== null)
      .map((p) => (p.exited! - p.term!) * 1000);
    if (quick.length) {
      const ms = Math.round(Math.max(...quick));
      reasoning.push(
        `${c2.length} request(s) were open at their pod's TERM; the app exited ${Math.round(Math.min(...quick))}–${ms} ms after TERM`,
      );
      advice.push(
        `the app exited ${ms} ms after TERM with requests in flight: on TERM stop accepting, finish what is open, then exit (drain before exiting)`,
      );
    } else if (!killed.length) {
      advice.push(
        `${c2.length} request(s) were cut while their pod stopped: drain open requests on TERM before exiting`,
      );
    }
    if (killed.length) {
      const hook = Math.max(0, ...killed.map((p) => p.preStopSleepSeconds ?? 0));
      advice.push(
        `${killed.map((p) => p.name).join(', ')} was killed (137) with requests open: \`terminationGracePeriodSeconds\` of at least hook + your longest request (${Math.ceil(hook + longest)}s)`,
      );
    }
  }
  const c3 = failures.filter((f) => f.cause === 3 && f.stage !== 'connect');
  if (c3.length)
    advice.push(
      `${c3.length} request(s) failed after their pod had left the endpoints: a client or proxy kept a connection to it; close idle keep-alive connections on TERM (send \`Connection: close\`)`,
    );
  const c4 = failures.filter((f) => f.cause === 4);
  if (c4.length)
    advice.push(
      `${c4.length} request(s) failed with nothing terminating: not a shutdown problem — look at the app itself (errors: ${[...new Set(c4.map((f) => f.errorCode ?? f.outcome))].join(', ')})`,
    );
  if (!anyFailed && deleted.length) {
    const race = raceWon(deleted);
    if (race) {
      advice.push(race.advice);
      reasoning.push(race.reasoning);
    } else advice.push('no change needed for what this run exercised');
  }
  return { advice, reasoning };
}

/**
 * A run with no failure whose deleted pods got TERM (no preStop hook held it back) sooner after their endpoint left
 * the EndpointSlice than the proxies may take to act on it (PROXY_PROPAGATION_SECONDS): the proxies won a race this
 * time. On the real node a quiet machine won it (0 of 418 failed) and a loaded one lost it (30 of 672), so a pass
 * here says how narrow it was instead of "no change needed". Null where nothing raced.
 */
export function raceWon(deleted: PodTimes[]): { advice: string; reasoning: string } | null {
  const raced = deleted.filter(
    (p) => p.term !== null && p.endpointNotReady !== null && p.term - p.endpointNotReady < PROXY_PROPAGATION_SECONDS,
  );
  if (!raced.length) return null;
  const margins = raced.map((p) => p.term! - p.endpointNotReady!);
  const [least, most] = [Math.min(...margins), Math.max(...margins)];
  const sleep = Math.ceil(
    Math.max(0, ...raced.map((p) => p.endpointNotReady! - p.deletion!)) + PROXY_PROPAGATION_SECONDS,
  );
  const span = least === most ? fmt(least) : `${fmt(least)}–${fmt(most)}`;
  return {
    advice: `no request failed, but by a narrow margin: TERM came ${span} after the endpoint left the EndpointSlice, and every proxy had to stop sending new connections within it (kube-proxy may take up to ${PROXY_PROPAGATION_SECONDS}s). An app that stops accepting on TERM loses this race on a busier node: \`preStop: sleep\` of at least ${sleep}s keeps it serving meanwhile`,
    reasoning: `${raced.map((p) => `${p.name} got TERM ${fmt(p.term! - p.endpointNotReady!)} after its endpoint was marked not ready (preStop: ${p.preStop})`).join('; ')}`,
  };
}

/** Exit codes as `run`'s: 0 pass, 1 fail or inconclusive; 5 the rollout did not complete (whatever the requests did: the Deployment is left mid-rollout); 130 interrupted. */
export const exitCodeOfGrade = (g: VerifyGrade) =>
  g.rolloutStalled
    ? EXIT.rolloutStalled
    : g.interrupted
      ? EXIT.interrupted
      : g.verdict === 'pass'
        ? EXIT.ok
        : EXIT.checksFailed;
