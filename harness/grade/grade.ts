// grade(observation) -> GradeResult: pure, offline, from the file alone.
import { OBSERVATION_SCHEMA_VERSION, type Observation } from '../observation.ts';
import { describePreStop } from '../scenario/schema.ts';
import { HARNESS_VERSION } from '../version.ts';
import { evidenceChecks, observedDeleteDelayMs } from './evidence.ts';
import { attributeExitCode, exitState, requestOutcome, runComplete } from './outcome.ts';
import { predictionChecks, type PredictionsFile } from './predictions.ts';
import { forgetSources } from './sources.ts';
import { predict, rulesFor } from './theory.ts';
import { timelineBars } from './timeline.ts';
import { RUBRIC_VERSION, type Check, type GradeResult, type Verdict, verdictOf } from './types.ts';

export interface GradeOptions {
  source?: string;
  predictions?: PredictionsFile;
  /** The schema version the file was written in (older ones are upgraded on reading). */
  fileVersion?: number;
}

function explain(verdict: Verdict, checks: Check[]): string {
  const firstBad = checks.find((c) => c.status === 'fail') ?? checks.find((c) => c.status === 'inconclusive');
  if (verdict === 'matches-model' || !firstBad) return 'the run did what the kubelet model predicts';
  return firstBad.reason;
}

export function grade(o: Observation, options: GradeOptions = {}): GradeResult {
  forgetSources(o);
  const fileVersion = options.fileVersion ?? OBSERVATION_SCHEMA_VERSION;
  // The model takes the grace from the delete response and the delay the harness really waited;
  // the evidence checks hold both against every other source.
  // The rules of the minor the cluster said it runs (theory.ts RULES_BY_MINOR).
  const versioned = rulesFor(o.run.cluster.serverVersion);
  const model = predict({ ...o.scenario, deleteDelayMs: observedDeleteDelayMs(o) ?? o.scenario.deleteDelayMs }, o.timeline.deleteAcknowledged?.deletionGracePeriodSeconds ?? null, versioned.rules);
  const evidence = evidenceChecks(o, fileVersion);
  const outcome = [runComplete(o), requestOutcome(o, model), exitState(o, model), attributeExitCode(o, model)];
  const verdict = verdictOf(evidence, outcome);
  const observed = { outcome: o.request.outcome, exitCode: o.finalState?.exitCode ?? null };
  const predictions = options.predictions ? predictionChecks(options.predictions, o.scenario.name, observed, model) : [];
  const checks = [...evidence, ...outcome, ...predictions];
  return {
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
    outcome: o.request.outcome,
    exitCode: observed.exitCode,
    reason: o.finalState?.reason ?? null,
    verdict,
    explanation: explain(verdict, checks),
    notes: [
      ...(fileVersion < OBSERVATION_SCHEMA_VERSION
        ? [`schema version ${fileVersion}: read and graded as version ${OBSERVATION_SCHEMA_VERSION}; its citations were found by the grader and it has no record of the pod UID the server answered with`]
        : []),
      ...(versioned.note ? [versioned.note] : []),
    ],
    prediction: model,
    checks,
    timeline: timelineBars(o, model),
    deleteWall: o.timeline.deleteIssued?.at.wall ?? null,
  };
}

export function failedOrInconclusive(result: { checks: Check[] }): boolean {
  return result.checks.some((c) => c.status !== 'pass');
}
