// grade(observation) -> GradeResult: pure, offline, from the file alone.
import { OBSERVATION_SCHEMA_VERSION, type Observation } from '../observation/schema.ts';
import { incompleteReasonOf } from '../observation/incomplete.ts';
import { describePreStop } from '../scenario/schema.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import { observedDeadline, podStatusEvidence, podStatusOutcome, safetyNetEnded } from './deadline.ts';
import { containerChecks, sidecarOutcomes } from './containers.ts';
import { evidenceChecks } from './evidence.ts';
import { anchor, kubeletTimes, observedKubelet } from './kubelet-times.ts';
import { lostPath, shownOutcome, underLostPath } from './lost-path.ts';
import { memoryEvidence } from './memory.ts';
import { attributeExitCode, exitState, requestOutcome, runComplete } from './outcome.ts';
import { observedRetries, retryChecks } from './retries.ts';
import { predictionChecks, type PredictionsFile, unseal } from './predictions.ts';
import { type Facts, factsOf } from './facts.ts';
import { predictScenario as predict } from './pod-theory.ts';
import { type Prediction, rulesFor } from './theory.ts';
import { stopSignalOf } from './stop-signal.ts';
import { stopSignalCheck } from './stop-signal-check.ts';
import { timelineBars } from './timeline.ts';
import {
  fail,
  inconclusive,
  RUBRIC_VERSION,
  type Check,
  type PodGradeResult,
  type Verdict,
  verdictOf,
} from './types.ts';

export interface GradeOptions {
  source?: string;
  /** Graded only when the run sealed none (a file handed in beside the run). */
  predictions?: PredictionsFile;
  /** Asked for by name (`termlab grade --predictions F`): graded instead of the sealed ones. */
  predictionsOverride?: PredictionsFile;
  /** The schema version the file was written in (older ones are upgraded on reading). */
  fileVersion?: number;
}

const asDesigned = (p: Prediction) => ({ outcome: p.outcome, termAt: p.termAt });

function explain(verdict: Verdict, checks: Check[]): string {
  // A run stopped early (Ctrl-C, a harness failure) says so first: what it then lacks follows from that.
  const stopped = checks.find((c) => c.id === 'evidence.run-complete' && c.status === 'inconclusive');
  // A prediction that missed an interrupted run's outcome follows from the stop too: the stop comes first.
  const firstBad =
    checks.find((c) => c.status === 'fail' && !c.id.startsWith('prediction.')) ??
    stopped ??
    checks.find((c) => c.status === 'fail') ??
    checks.find((c) => c.status === 'inconclusive');
  // A pod with a sidecar says which container cut what (containers.ts attribution.cut-by).
  const cut = checks.find((c) => c.id === 'attribution.cut-by' && c.status === 'pass');
  // A retry scenario tells what its attempts did to the ledger (retries.ts attribution.effects).
  const effects = checks.find((c) => c.id === 'attribution.effects' && c.status === 'pass');
  // A stopSignal scenario tells which signal ran: the one asked for, or SIGTERM where the cluster dropped it.
  const signal = checks.find((c) => c.id === 'attribution.stop-signal' && c.status === 'pass');
  const told = [signal, cut, effects]
    .filter((c) => c !== undefined)
    .map((c) => c.reason)
    .join('; ');
  if (verdict === 'matches-model' || !firstBad)
    return `the run did what the kubelet model predicts${told ? `: ${told}` : ''}`;
  return firstBad.reason;
}

export function grade(o: Observation, options: GradeOptions = {}): PodGradeResult {
  // Facts first (every source parsed once, the timeline derived), then checks over them.
  const f = factsOf(o);
  const fileVersion = options.fileVersion ?? OBSERVATION_SCHEMA_VERSION;
  // The model takes the grace from the delete response and the delay the harness really waited;
  // the evidence checks hold both against every other source.
  // The rules of the minor the cluster said it runs (theory.ts RULES_BY_MINOR).
  const versioned = rulesFor(o.run.cluster.serverVersion);
  const asRun = { ...o.scenario, deleteDelayMs: f.deleteDelayMs ?? o.scenario.deleteDelayMs };
  const deletionGrace = f.timeline.deleteAcknowledged?.deletionGracePeriodSeconds ?? null;
  // Graded from the kubelet's observed TERM (kubelet-times.ts cross-examines it); a student's
  // prediction, made before the run, is compared with the model's answer without it.
  // The pod's active deadline, placed by its startTime: when it passes before the delete, it starts the kill (deadline.ts).
  const deadline = observedDeadline(f);
  // A stopSignal is taken as the cluster left it on the live pod (kept, or dropped with its gate off).
  const stop = stopSignalOf(o, versioned.rules);
  const model = predict(asRun, deletionGrace, versioned.rules, observedKubelet(f, deadline), deadline, stop);
  const beforeTheRun = predict(asRun, deletionGrace, versioned.rules, null, undefined, stop);
  const retried = retryChecks(f, model, fileVersion);
  const evidence = stoppedEarly(f, [
    ...evidenceChecks(f, fileVersion),
    ...containerChecks(f),
    kubeletTimes(f, deadline, model.graceSeconds, versioned.rules),
    podStatusEvidence(f, deadline),
    memoryEvidence(f),
    ...retried.evidence,
  ]);
  const lost = lostPath(f);
  // A request the harness lost is never graded as the kubelet's cut or completion (lost-path.ts).
  const outcome = underLostPath(f, [
    runComplete(f),
    requestOutcome(f, model),
    exitState(f, model),
    attributeExitCode(f, model, versioned.rules),
    podStatusOutcome(f, model, deadline, versioned.rules),
    ...sidecarOutcomes(f, model),
    ...retried.outcome,
    ...stopSignalCheck(f, stop),
  ]);
  const verdict = verdictOf(evidence, outcome);
  const observed = { outcome: o.request.outcome, exitCode: o.finalState?.exitCode ?? null, ...observedRetries(o) };
  // The predictions the run sealed before its first pod are the ones graded; a file given beside
  // them counts only for a run made without (the gradebook flags that, and any mismatch).
  const unsealed = o.run.predictions ? unseal(o.run.predictions, options.source ?? 'the observation') : null;
  const graded = options.predictionsOverride ?? (unsealed && 'file' in unsealed ? unsealed.file : options.predictions);
  const predictions = [
    ...(unsealed && 'problem' in unsealed ? [fail('prediction.sealed', unsealed.problem)] : []),
    ...(graded ? predictionChecks(graded, o.scenario, observed, beforeTheRun) : []),
  ];
  const checks = [...evidence, ...outcome, ...predictions];
  return {
    kind: 'pod',
    source: options.source ?? '',
    rubricVersion: RUBRIC_VERSION,
    graderVersion: HARNESS_VERSION,
    scenario: o.scenario.name,
    runId: o.run.runId,
    observedAt: o.run.observedAt,
    mode: o.scenario.mode,
    preStop: describePreStop(o.scenario.preStop),
    graceSeconds: model.graceSeconds,
    workMs: o.scenario.workMs,
    labPair: o.scenario.labPair ?? null,
    podUid: o.pod?.uid ?? null,
    // The request's fate as a report shows it: `interrupted` when the run's own stop ended it (lost-path.ts).
    outcome: shownOutcome(f, lost),
    exitCode: observed.exitCode,
    reason: o.finalState?.reason ?? null,
    verdict,
    explanation: explain(verdict, checks),
    notes: [
      ...versionNotes(fileVersion, o.retries !== undefined),
      ...(versioned.note ? [versioned.note] : []),
      ...(stop && !stop.delivered ? [stop.note] : []),
    ],
    attempt: o.run.attempt ?? 1,
    // A try the harness's own delays spoiled (its request lost, its safety deadline outlived) may run again.
    lostPath: lost?.kind === 'lost' ? lost.reason : safetyNetEnded(f, model),
    sealedPredictions:
      unsealed && 'file' in unsealed
        ? { sha256: o.run.predictions!.sha256, student: unsealed.file.student?.trim() || null }
        : null,
    prediction: model,
    asDesigned: asDesigned(
      predict(o.scenario, o.scenario.deleteGracePeriodSeconds ?? null, versioned.rules, null, undefined, stop),
    ),
    checks,
    ...(retried.summary ? { retries: retried.summary } : {}),
    ...(o.containers && o.containers.length > 1
      ? {
          containers: o.containers.map((c) => ({
            name: c.name,
            exitCode: c.finalState?.exitCode ?? null,
            reason: c.finalState?.reason ?? null,
          })),
        }
      : {}),
    timeline: timelineBars(o, model, shownOutcome(f, lost), anchor(f)?.deleteWallMs ?? null),
    deleteWall: f.timeline.deleteIssued?.at.wall ?? null,
  };
}

/**
 * A run that stopped (Ctrl-C, a harness failure) before it captured the pod or had a request
 * accepted holds no claim about any termination: what it lacks is missing, not false.
 */
function stoppedEarly({ o, timeline }: Facts, checks: Check[]): Check[] {
  if (o.run.complete || (o.pod !== null && timeline.requestAccepted !== null)) return checks;
  const why = incompleteReasonOf(o.run);
  return checks.map((c) =>
    c.status === 'fail' ? inconclusive(c.id, `${c.reason} (${why}: nothing was observed to grade)`) : c,
  );
}

function versionNotes(fileVersion: number, retried: boolean): string[] {
  // Version 7 added only the retries' routes: a version 6 file of any other scenario is whole.
  if (fileVersion >= OBSERVATION_SCHEMA_VERSION || (fileVersion === 6 && !retried)) return [];
  const missing =
    fileVersion < 2
      ? "its citations were found by the grader and it has no record of the pod UID the server answered with, of the port-forward's life nor of the pod's status reason"
      : fileVersion < 3
        ? "it has no record of the port-forward's life (opens, errors, closes) nor of the pod's status reason and active deadline"
        : fileVersion < 4
          ? "it has no record of the pod's status reason and message nor of its active deadline"
          : fileVersion < 5
            ? "it records one container: no sidecar's log, state or timeline"
            : fileVersion < 6
              ? 'it records no retries (attempts, standby pod, ledger): none of its scenarios retried'
              : 'its retries went straight to the standby pod: it records no Service for them and no route';
  return [`schema version ${fileVersion}: read and graded as version ${OBSERVATION_SCHEMA_VERSION}; ${missing}`];
}

export function failedOrInconclusive(result: { checks: Check[] }): boolean {
  return result.checks.some((c) => c.status !== 'pass');
}
