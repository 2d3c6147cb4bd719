// gradeRollout(observation) -> GradeResult: pure, offline, from the file alone, through the same
// verdict rules as a pod observation. Every claim is held against a second source: the load's
// records against the lab pods' logs, the live reads against the watch and the logs.
import { isDeepStrictEqual } from 'node:util';
import type { RolloutObservation } from '../../observation/rollout.ts';
import { incompleteReasonOf } from '../../observation/incomplete.ts';
import { describePreStop } from '../../scenario/schema.ts';
import { HARNESS_VERSION } from '../../../lib/version.ts';
import { rulesFor, TOLERANCE_SECONDS } from '../theory.ts';
import {
  type Check,
  fail,
  type GradeResult,
  inconclusive,
  pass,
  RUBRIC_VERSION,
  type RolloutSection,
  verdictOf,
} from '../types.ts';
import { originOf, type PodFacts, podFacts } from './facts.ts';
import { isFailure, type LoadLog, type LoadRecord, parseLoadLog } from './records.ts';
import { combine, describeLifecycle, type Exposure, predictOldPod, PROXY_PROPAGATION_SECONDS } from './theory.ts';

export type Cause =
  | 'before the change'
  | 'draining (503)'
  | 'refused after TERM'
  | 'unanswered after TERM'
  | 'cut at TERM'
  | 'cut by SIGKILL'
  | 'cut'
  | 'timed out'
  | 'http error'
  | 'unattributed';

export interface Attribution {
  record: LoadRecord;
  pods: string[];
  cause: Cause;
}

const lifecycleOf = (c: { lifecycle: Record<string, unknown> | null }[]) => c[0]?.lifecycle ?? null;

/** Which pod each failed request reached and why, from the record, the pods' logs and the watch. */
export function attribute(records: LoadRecord[], pods: PodFacts[], origin: { wall: number } | null): Attribution[] {
  const byUid = new Map(pods.map((p) => [p.uid, p]));
  return records.filter(isFailure).map((record) => {
    const pod = record.podUid ? byUid.get(record.podUid) : undefined;
    // Ended (failed) before the template changed and before any pod's TERM: not the rollout's doing.
    const endedAt = Date.parse(record.ended.time);
    if (origin && endedAt < origin.wall && pods.every((p) => p.termWall === null || p.termWall > endedAt))
      return { record, pods: pod ? [pod.uid] : [], cause: 'before the change' };
    if (record.outcome === 'rejected') return { record, pods: pod ? [pod.uid] : [], cause: 'draining (503)' };
    if (record.outcome === 'http-error') return { record, pods: pod ? [pod.uid] : [], cause: 'http error' };
    if (record.outcome === 'cut') {
      const cause: Cause = pod?.exitCode === 137 ? 'cut by SIGKILL' : pod && pod.term !== null ? 'cut at TERM' : 'cut';
      return { record, pods: pod ? [pod.uid] : [], cause };
    }
    // A connection never answered (a SYN to a pod that is gone is dropped) counts like a refused one.
    const unanswered = record.errorCode === 'ETIMEDOUT';
    if (unanswered && record.stage === 'body') return { record, pods: pod ? [pod.uid] : [], cause: 'timed out' };
    // No answer: the pods past their TERM whose endpoint a proxy may still have held.
    const sent = Date.parse(record.sent.time);
    const tol = TOLERANCE_SECONDS * 1000;
    const candidates = pods.filter((p) => {
      if (p.termWall === null || sent < p.termWall - tol) return false;
      const removedWall = p.endpointRemoved !== null && origin ? origin.wall + p.endpointRemoved * 1000 : null;
      const until = Math.max(removedWall ?? -Infinity, p.endedWall ?? -Infinity);
      return !Number.isFinite(until) || sent <= until + PROXY_PROPAGATION_SECONDS * 1000 + tol;
    });
    // Those already past TERM when it was sent first, the most recent of them first (its endpoint is
    // the likeliest still in a proxy's rules); then those within the clocks' tolerance of it.
    const past = (p: PodFacts) => (p.termWall! <= sent ? 0 : 1);
    candidates.sort((a, b) => past(a) - past(b) || b.termWall! - a.termWall!);
    return {
      record,
      pods: candidates.map((p) => p.uid),
      cause: !candidates.length ? 'unattributed' : unanswered ? 'unanswered after TERM' : 'refused after TERM',
    };
  });
}

export function loadLogCheck(o: RolloutObservation, load: LoadLog): Check {
  const id = 'evidence.load-log';
  if (!o.evidence.loadLog) return inconclusive(id, 'no load pod log was recorded');
  if (load.malformed.length) return fail(id, `load log line ${load.malformed[0]!.line}: ${load.malformed[0]!.problem}`);
  const seqs = load.records.map((r) => r.seq);
  if (new Set(seqs).size !== seqs.length) return fail(id, 'a request sequence number appears twice in the load log');
  const wrongId = load.records.find((r) => r.id !== `L${r.seq}`);
  if (wrongId)
    return fail(id, `load log line ${wrongId.line}: id ${wrongId.id} does not match its sequence ${wrongId.seq}`);
  const backwards = load.records.find(
    (r) => r.ended.mono < r.sent.mono || (r.headersAt && r.headersAt.mono < r.sent.mono),
  );
  if (backwards) return fail(id, `load log line ${backwards.line}: request ${backwards.id} ends before it was sent`);
  if (!load.start || !load.end)
    return inconclusive(
      id,
      `the load log has no ${load.start ? 'load-end' : 'load-start'} line: the load did not run to its end`,
    );
  const count = (test: (r: LoadRecord) => boolean) => load.records.filter(test).length;
  const tally = {
    sent: load.records.length,
    completed: count((r) => r.outcome === 'completed'),
    rejected: count((r) => r.outcome === 'rejected'),
    failed: count(isFailure),
  };
  for (const key of ['sent', 'completed', 'rejected', 'failed'] as const) {
    if (tally[key] !== load.end[key])
      return fail(
        id,
        `the load's own tally says ${load.end[key]} ${key}, its request lines ${tally[key]} (load log line ${load.end.line})`,
      );
  }
  return pass(id, `${tally.sent} requests, ${tally.failed} failed; the load's own tally agrees`);
}

function requestsVsLabLogs(load: LoadLog, pods: PodFacts[]): Check {
  const id = 'evidence.requests-vs-lab-logs';
  const byUid = new Map(pods.map((p) => [p.uid, p]));
  // Each pod's "event id" pairs, read once: a load has thousands of requests.
  const seen = new Map(
    pods.map((p) => [p.uid, new Set((p.log?.lines ?? []).map((l) => `${l.event} ${String(l.fields.id)}`))]),
  );
  const logs = (pod: PodFacts, event: string, reqId: string) => seen.get(pod.uid)!.has(`${event} ${reqId}`);
  const logged = (event: string, reqId: string) => pods.filter((p) => logs(p, event, reqId));
  let checked = 0;
  for (const r of load.records) {
    if (r.outcome === 'completed' || r.outcome === 'rejected') {
      const pod = r.podUid ? byUid.get(r.podUid) : undefined;
      if (!pod)
        return fail(
          id,
          `load log line ${r.line}: request ${r.id} was answered by pod ${r.podUid ?? '(none)'}, which the watch never saw among the lab pods`,
        );
      const event = r.outcome === 'completed' ? 'completed' : 'rejected';
      if (pod.log?.whole && !logs(pod, event, r.id)) {
        return fail(
          id,
          `load log line ${r.line}: request ${r.id} ${r.outcome} at pod ${pod.name}, but that pod's whole log has no ${event} line for it`,
        );
      }
      checked++;
    } else if (r.stage === 'connect' || (r.stage === 'request' && r.headersAt === null && r.outcome === 'failed')) {
      // Never answered: no server may have finished it.
      const finished = logged('completed', r.id);
      if (finished.length)
        return fail(
          id,
          `load log line ${r.line}: request ${r.id} failed (${r.errorCode ?? 'no code'}), but pod ${finished[0]!.name} logged it completed`,
        );
      checked++;
    }
  }
  // The other way: a request a server completed that the load says it never sent.
  const ids = new Set(load.records.map((r) => r.id));
  for (const p of pods) {
    const stray = p.log?.lines.find(
      (l) =>
        l.event === 'completed' &&
        typeof l.fields.id === 'string' &&
        /^L\d+$/.test(l.fields.id) &&
        !ids.has(l.fields.id),
    );
    if (stray && load.end)
      return fail(
        id,
        `pod ${p.name} completed request ${stray.fields.id} (log line ${stray.line}), which the load log does not record`,
      );
  }
  return pass(id, `${checked} requests agree with the lab pods' own logs`);
}

export function lifecycleCaptured(o: RolloutObservation, pods: PodFacts[]): Check {
  const id = 'evidence.lifecycle-captured';
  const terminated = pods.filter((p) => p.deletionSeen !== null);
  if (!terminated.length) return inconclusive(id, 'no lab pod was seen terminating');
  for (const p of terminated) {
    const reads = o.liveReads.filter((r) => r.pod === p.name);
    if (!reads.length) return inconclusive(id, `pod ${p.name} terminated but its live lifecycle was not read`);
    const read = reads.find((r) => r.found && r.uid === p.uid);
    if (read?.source === 'watch' && read.resourceVersion !== read.after.resourceVersion)
      return fail(
        id,
        `pod ${p.name}: its lifecycle is said to be the watch event @${read.after.resourceVersion}'s, but is dated @${read.resourceVersion}`,
      );
    if (!read)
      return inconclusive(
        id,
        `pod ${p.name}: the read found ${reads[0]!.found ? `another pod (uid ${reads[0]!.uid})` : 'nothing'}; its live lifecycle is unknown`,
      );
    if (p.deleted !== null && p.liveReadAt !== null && p.liveReadAt > p.deleted)
      return fail(
        id,
        `pod ${p.name}: its live read is dated after its DELETED event (${p.liveReadAt.toFixed(3)}s > ${p.deleted.toFixed(3)}s after the change): it cannot have read the live pod`,
      );
    const trigger = p.events.find(
      (e) => e.resourceVersion === read.after.resourceVersion && e.deletionTimestamp !== null,
    );
    if (!trigger)
      return fail(
        id,
        `pod ${p.name}: its live read cites watch event @${read.after.resourceVersion}, which shows no deletion of this pod`,
      );
  }
  const fromWatch = terminated.filter((p) =>
    o.liveReads.some((r) => r.pod === p.name && r.found && r.uid === p.uid && r.source === 'watch'),
  ).length;
  return pass(
    id,
    `the live lifecycle of all ${terminated.length} terminated pods was read while they terminated${fromWatch ? ` (${fromWatch} from the watch event that showed the deletion: the pod was gone before its read came back)` : ', before they were gone'}`,
  );
}

export function lifecycleConsistent(pods: PodFacts[]): Check {
  const id = 'evidence.lifecycle-consistent';
  for (const p of pods) {
    const read = p.live;
    if (!read) continue;
    const watched = p.events.find((e) => e.spec.length);
    if (
      watched &&
      !isDeepStrictEqual(
        watched.spec.map((c) => [c.name, c.lifecycle, c.labMode]),
        read.containers.map((c) => [c.name, c.lifecycle, c.labMode]),
      )
    ) {
      return fail(
        id,
        `pod ${p.name}: the live read shows ${describeLifecycle(lifecycleOf(read.containers))} (${read.containers[0]?.labMode ?? '?'}), the watch showed ${describeLifecycle(lifecycleOf(watched.spec))} (${watched.spec[0]?.labMode ?? '?'}) for the same pod`,
      );
    }
    // The exec hook writes hook-start to the server's log: a whole log that got TERM must agree.
    const hasExecHook = Boolean((lifecycleOf(read.containers)?.preStop as { exec?: unknown } | undefined)?.exec);
    if (p.log?.whole && p.term !== null) {
      if (hasExecHook && p.hookStart === null)
        return fail(
          id,
          `pod ${p.name}: the live read shows an exec preStop hook, but its whole log has no hook-start before TERM`,
        );
      if (!hasExecHook && p.hookStart !== null)
        return fail(
          id,
          `pod ${p.name}: its log shows a preStop hook running, but the live read shows ${describeLifecycle(lifecycleOf(read.containers))}`,
        );
    }
  }
  return pass(id, "each live read agrees with the watch and with the pod's own log");
}

function templateVsLive(o: RolloutObservation, pods: PodFacts[]): Check {
  const id = 'rollout.template-vs-live';
  const after = o.template.after;
  if (!after) return inconclusive(id, 'the template change was not recorded');
  const old = pods.filter((p) => p.revision === 'old' && p.deletionSeen !== null);
  if (!old.length) return inconclusive(id, 'no old pod was seen terminating');
  const missing = old.filter((p) => !p.live);
  if (missing.length)
    return inconclusive(
      id,
      `old pod(s) ${missing.map((p) => p.name).join(', ')} have no live read: the report shows them as not captured, never as the template`,
    );
  const template = describeLifecycle(lifecycleOf(after.containers));
  const differ = old.filter((p) => !isDeepStrictEqual(lifecycleOf(p.live!.containers), lifecycleOf(after.containers)));
  return pass(
    id,
    differ.length
      ? `${differ.length} of ${old.length} old pods ran ${[...new Set(differ.map((p) => describeLifecycle(lifecycleOf(p.live!.containers))))].join(', ')}, not the new template's ${template}`
      : `all ${old.length} old pods ran the new template's own ${template}`,
  );
}

function failuresAttributed(attributions: Attribution[]): Check {
  const id = 'rollout.failures-attributed';
  if (!attributions.length) return pass(id, 'no request failed');
  const lost = attributions.filter(
    (a) => a.cause === 'unattributed' || (a.pods.length === 0 && a.cause !== 'before the change'),
  );
  const byCause = new Map<string, number>();
  for (const a of attributions) byCause.set(a.cause, (byCause.get(a.cause) ?? 0) + 1);
  const summary = [...byCause].map(([c, n]) => `${n} ${c}`).join(', ');
  if (lost.length)
    return inconclusive(
      id,
      `${lost.length} failed request(s) reached no pod the evidence can name (${summary}); first: ${lost[0]!.record.id} ${lost[0]!.record.errorCode ?? lost[0]!.record.outcome}`,
    );
  return pass(id, `${attributions.length} failed request(s), each attributed: ${summary}`);
}

function predictRollout(
  o: RolloutObservation,
  pods: PodFacts[],
): {
  exposure: Exposure;
  steps: string[];
  templateExposure: Exposure;
  rules: RolloutSection['rules'];
  note: string | null;
} {
  const old = pods.filter((p) => p.revision === 'old');
  // The kubelet's rules of the minor the cluster said it runs, as a pod's grading takes them.
  const { minor, rules, note } = rulesFor(o.run.cluster.serverVersion);
  const steps: string[] = [`the kubelet's rules of Kubernetes ${minor} (${rules.source})`];
  const exposures = old.map((p) => {
    const prediction = predictOldPod({
      mode: p.live?.containers[0]?.labMode ?? null,
      lifecycle: p.live ? lifecycleOf(p.live.containers) : null,
      graceSeconds: p.live?.terminationGracePeriodSeconds ?? o.scenario.terminationGracePeriodSeconds,
      workMs: o.scenario.load.workMs,
      rules,
    });
    if (!p.live) return 'possible' as Exposure;
    steps.push(
      `${p.name}: ${describeLifecycle(lifecycleOf(p.live.containers))} → ${prediction.failures} (${prediction.why})`,
    );
    return prediction.failures;
  });
  // What a report that read only the new template would have said: the pitfall, for the record.
  const templatePrediction = predictOldPod({
    mode: o.template.after?.containers[0]?.labMode ?? o.scenario.to.mode,
    lifecycle: o.template.after ? lifecycleOf(o.template.after.containers) : null,
    graceSeconds: o.scenario.terminationGracePeriodSeconds,
    workMs: o.scenario.load.workMs,
    rules,
  });
  steps.push(`the new template alone would say: ${templatePrediction.failures}`);
  return {
    exposure: old.length ? combine(exposures) : 'possible',
    steps,
    templateExposure: templatePrediction.failures,
    rules: { minor, source: rules.source },
    note,
  };
}

function modelCheck(exposure: Exposure, failed: number, oldFailed: number): Check {
  const id = 'rollout.model';
  if (exposure === 'none')
    return failed === 0
      ? pass(id, 'the model predicts no failed request and none failed')
      : fail(id, `the model predicts no failed request from the old pods' live lifecycle, but ${failed} failed`);
  if (exposure === 'expected')
    return oldFailed > 0
      ? pass(id, `the model expects failures at the old pods and ${oldFailed} request(s) failed there`)
      : fail(id, 'the model expects requests to fail at the old pods, but none did');
  return oldFailed > 0
    ? pass(id, `the model says requests may fail at the old pods and ${oldFailed} did`)
    : inconclusive(
        id,
        `the model says requests may fail at the old pods (TERM before every proxy dropped them), but none did: the kubelet's reaction may have outlasted the proxies' ${PROXY_PROPAGATION_SECONDS}s`,
      );
}

/**
 * A rollout the harness stopped (Ctrl-C, a harness failure) holds no claim either way: what it did not see may
 * have come later, and what failed may be its own cleanup's doing (it deletes the Deployment under the load).
 * So its fails are inconclusive, as an interrupted verify is never a pass or a fail.
 */
export function unclaimedIfStopped(run: RolloutObservation['run'], checks: Check[]): Check[] {
  if (run.complete) return checks;
  const why = incompleteReasonOf(run);
  return checks.map((c) =>
    c.status === 'fail' ? inconclusive(c.id, `${c.reason} (but ${why}: the rest of the rollout was not observed)`) : c,
  );
}

export function gradeRollout(o: RolloutObservation, options: { source?: string } = {}): GradeResult {
  const pods = podFacts(o);
  const origin = originOf(o);
  const load = parseLoadLog(o.evidence.loadLog);
  const attributions = attribute(load.records, pods, origin);
  const oldUids = new Set(pods.filter((p) => p.revision === 'old').map((p) => p.uid));
  const oldFailed = attributions.filter(
    (a) => a.cause !== 'before the change' && a.pods.some((uid) => oldUids.has(uid)),
  ).length;
  const duringRollout = attributions.filter((a) => a.cause !== 'before the change').length;
  const model = predictRollout(o, pods);
  const evidence = unclaimedIfStopped(o.run, [
    loadLogCheck(o, load),
    requestsVsLabLogs(load, pods),
    lifecycleCaptured(o, pods),
    lifecycleConsistent(pods),
  ]);
  const complete = o.run.complete
    ? pass('outcome.run-complete', 'the rollout completed, the load ran to its end and everything was cleaned up')
    : inconclusive('outcome.run-complete', `the run is incomplete: ${incompleteReasonOf(o.run)}`);
  const outcome = unclaimedIfStopped(o.run, [
    complete,
    templateVsLive(o, pods),
    failuresAttributed(attributions),
    modelCheck(model.exposure, duringRollout, oldFailed),
  ]);
  const checks = [...evidence, ...outcome];
  const verdict = verdictOf(evidence, outcome);
  const firstBad = checks.find((c) => c.status === 'fail') ?? checks.find((c) => c.status === 'inconclusive');
  const s = o.scenario;
  const described = (t: typeof o.template.before) => (t ? describeLifecycle(lifecycleOf(t.containers)) : null);
  const [liveBefore, liveAfter] = [described(o.template.before), described(o.template.after)];
  const causeOf = new Map(attributions.map((a) => [a.record, a.cause]));
  const causes = new Map<string, number>();
  for (const a of attributions) causes.set(a.cause, (causes.get(a.cause) ?? 0) + 1);
  const section: RolloutSection = {
    templateBefore: liveBefore ?? describePreStop(s.from.preStop),
    templateAfter: liveAfter ?? describePreStop(s.to.preStop),
    exposure: model.exposure,
    templateExposure: model.templateExposure,
    rules: model.rules,
    steps: model.steps,
    requests: { total: load.records.length, failed: attributions.length, oldFailed },
    pods: pods.map((p) => ({
      name: p.name,
      uid: p.uid,
      revision: p.revision,
      template: p.revision === 'old' ? liveBefore : liveAfter,
      live: p.live ? describeLifecycle(lifecycleOf(p.live.containers)) : null,
      created: p.created,
      ready: p.ready,
      endpointRemoved: p.endpointRemoved,
      term: p.term,
      ended: p.ended,
      exitCode: p.exitCode,
      failed: attributions.filter((a) => a.pods[0] === p.uid).length,
    })),
    causes: Object.fromEntries(causes),
    points: load.records.map((r) => ({
      t: origin ? (Date.parse(r.sent.time) - origin.wall) / 1000 : r.sent.mono / 1000,
      outcome: r.outcome === 'completed' ? 'completed' : (causeOf.get(r) ?? 'unattributed'),
    })),
  };
  return {
    source: options.source ?? '',
    rubricVersion: RUBRIC_VERSION,
    graderVersion: HARNESS_VERSION,
    scenario: s.name,
    runId: o.run.runId,
    observedAt: o.run.observedAt,
    mode: s.from.mode === s.to.mode ? s.from.mode : `${s.from.mode} → ${s.to.mode}`,
    preStop: `${describePreStop(s.from.preStop)} → ${describePreStop(s.to.preStop)}`,
    graceSeconds: s.terminationGracePeriodSeconds,
    workMs: s.load.workMs,
    labPair: null,
    kind: 'rollout',
    deploymentUid: o.objects.deployment?.uid ?? null,
    outcome: `${attributions.length} of ${load.records.length} requests failed`,
    exitCode: null,
    reason: null,
    verdict,
    explanation:
      verdict === 'matches-model' || !firstBad
        ? "the rollout did what the model predicts from the old pods' live lifecycle"
        : firstBad.reason,
    notes: model.note ? [model.note] : [],
    prediction: null,
    checks,
    timeline: [],
    deleteWall: o.timeline.templateChanged?.wall ?? null,
    rollout: section,
  };
}
