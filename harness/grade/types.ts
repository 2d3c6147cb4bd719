import { dirname } from 'node:path';
import type { LabPairRole } from '../scenario/schema.ts';
import type { Prediction } from './theory.ts';

export const RUBRIC_VERSION = 'termlab-rubric/2';

export type CheckStatus = 'pass' | 'fail' | 'inconclusive';
export interface Check {
  /** Stable id: tooling and JUnit match on it. */
  id: string;
  status: CheckStatus;
  /** One line a student can act on. */
  reason: string;
}

export type Verdict = 'matches-model' | 'differs-from-model' | 'inconclusive' | 'evidence-invalid';

export interface TimelineBar {
  label: string;
  kind: 'request' | 'grace' | 'hook' | 'term' | 'kill' | 'terminated' | 'deleted' | 'effect';
  /** Seconds relative to the delete being issued. */
  start: number;
  end: number;
  source: 'harness' | 'container-log' | 'inferred' | 'model';
  /** The container it belongs to, in a pod with a sidecar ("lab (app)", "proxy (native sidecar)"), or a retry's attempt: one lane each. */
  lane?: string;
}

/** What every grade says, whatever kind of run it grades. */
interface ResultBase {
  source: string;
  rubricVersion: string;
  graderVersion: string;
  scenario: string;
  runId: string;
  observedAt: string;
  mode: string;
  preStop: string;
  graceSeconds: number;
  workMs: number;
  labPair: { id: string; role: LabPairRole } | null;
  outcome: string;
  exitCode: number | null;
  reason: string | null;
  verdict: Verdict;
  explanation: string;
  /** Things a reader should know that are not checks: an old schema version read. */
  notes: string[];
  /** The kubelet model's prediction for a pod scenario; null for a rollout (its model is in `rollout`). */
  prediction: Prediction | null;
  checks: Check[];
  timeline: TimelineBar[];
  deleteWall: string | null;
  /** The try of this scenario in its run (1 when not recorded). */
  attempt?: number;
  /** The predictions the run sealed before its first pod (their hash and student); null when none were, or they fail their hash. */
  sealedPredictions?: { sha256: string; student: string | null } | null;
  /** Why the harness lost this try's request, when it did: such a try may be run again. */
  lostPath?: string | null;
  /** A later try of the same scenario in the same run replaced this one (its file), which then counts instead. */
  supersededBy?: string;
  /** Why this try was run again (retry-cause.ts), written with supersededBy when one is known. */
  retryCause?: RetryCause;
}

/** Why a try is run again on a fresh pod, in a few words (the verdict column) and in full (its progress line). */
export interface RetryCause {
  label: string;
  reason: string;
}

/** A lab pair (the same work cut under a short grace, then completed), as graded (pairs.ts). */
export interface PairResult {
  pairId: string;
  checks: Check[];
  /** The halves handed in whose evidence is invalid: such a pair is "invalid", not "missing". */
  invalidRoles?: LabPairRole[];
}

/** A retry scenario's attempts and the ledger's count, as graded (harness/grade/retries.ts). */
export interface RetrySummary {
  idempotencyKey: boolean;
  effect: 'start' | 'end' | 'none';
  attempts: { n: number; target: 'deleted' | 'standby'; podUid: string | null; outcome: string }[];
  /** Records the ledger applied, and effects it answered already-applied. */
  effects: number;
  alreadyApplied: number;
  /** The model's answer for this run. */
  predicted: { attempts: number; effects: number; alreadyApplied: number };
  /** The cause in one sentence, with times. */
  story: string;
  /** What the effect one point earlier would have done (an effect at the end that a cut never reached). */
  counterfactual: string | null;
}

/** A pod scenario's grade: the one pod it deleted. */
export interface PodGradeResult extends ResultBase {
  kind: 'pod';
  podUid: string | null;
  rollout?: undefined;
  /**
   * The model's answer for the scenario as written (from the rules alone, no observed times): a pair half
   * whose own times (a delete the API took late, a late kubelet) gave another answer did not test the design.
   */
  asDesigned?: { outcome: Prediction['outcome']; termAt: number };
  /** A retry scenario's attempts and effects (issue 27); absent otherwise. */
  retries?: RetrySummary;
  /** A pod of more than one container: each one's end as the API showed it, the app first; absent for one container. */
  containers?: { name: string; exitCode: number | null; reason: string | null }[];
}

/** A rollout's grade: the Deployment it rolled, and its own findings for the reports. */
export interface RolloutGradeResult extends ResultBase {
  kind: 'rollout';
  deploymentUid: string | null;
  rollout: RolloutSection;
  /** An edge scenario's own findings (grade/edge/grade.ts); absent for a rollout without an edge. */
  edge?: EdgeGradeSection;
}

/** What an edge scenario's grade adds: the model's expectation for each cause, and what was seen of it. */
export interface EdgeGradeSection {
  via: 'httproute' | 'ingress';
  host: string | null;
  /** The model's lag of the edge (seconds): how long it may still send to a dropped endpoint. */
  modelLagSeconds: number;
  expectations: { cause: string; exposure: 'expected' | 'possible' | 'none'; seen: number; why: string }[];
  /** Failed requests by cause (the edge's causes, else the rollout's). */
  causes: Record<string, number>;
  /** The longest the edge was seen still sending to a dropped endpoint (seconds); null when it never was. */
  measuredLagSeconds: number | null;
  /** Requests the edge logged as retried by its own retry middleware (RetryAttempts > 0). */
  edgeRetried: number;
  /** The first request that failed to the edge's lag, moment by moment (grade/edge/picture.ts); null when none did. */
  picture?: EdgePicture | null;
}

/**
 * One failed request through the edge, each moment from its own source. Times are seconds from the pod's
 * deletion as the pod watch saw it (the report's 0, the delete), each converted as the edge's attribution does.
 */
export interface EdgePicture {
  /** The load's id, and its method and path as the edge logged them. */
  request: { id: string; method: string; path: string };
  pod: string;
  /** Where the edge sent it (the access line's ServiceAddr). */
  upstream: string;
  /** The deletion, seconds after the template change: where the picture's 0 is in the checks' times. */
  deletionAfterChange: number;
  /** The EndpointSlice watch: the endpoint not ready, or gone, and which. */
  sliceDropped: number;
  dropped: 'ready=false' | 'gone';
  /** The edge's access log: StartUTC of this request. */
  routed: number;
  /** The pod's own log: its signal line; null when it logged none. */
  term: number | null;
  /** The load's line: sent and ended, its status or error, and the first bytes of the body it got. */
  sent: number;
  ended: number;
  status: number | null;
  error: string | null;
  body: string | null;
  /** The edge's access log: DownstreamStatus, and OriginStatus (null: nothing from the pod). */
  edgeStatus: number;
  originStatus: number | null;
  /** Whether the pod answered it (false: the status is the edge's own, as attribute.ts reads it). */
  podAnswered: boolean;
  /** The last request the edge still sent to this pod after the drop (its StartUTC and load id): the lag's end. */
  lastRouted: number;
  lastRequest: string | null;
}

/** A grade, keyed by the kind of run it grades. */
export type GradeResult = PodGradeResult | RolloutGradeResult;

/** The UID of the object the run made and graded: its pod, or its Deployment. */
export const objectUidOf = (r: GradeResult): string | null => (r.kind === 'pod' ? r.podUid : r.deploymentUid);

/** One run of one submission, as a lab pair is formed within it: the run id alone is not enough, a copied run shares it. */
export const runKeyOf = (r: { source: string; runId: string }): string => `${dirname(r.source)}\0${r.runId}`;

export const pass = (id: string, reason: string): Check => ({ id, status: 'pass', reason });
export const fail = (id: string, reason: string): Check => ({ id, status: 'fail', reason });
export const inconclusive = (id: string, reason: string): Check => ({ id, status: 'inconclusive', reason });

/** Tampered evidence outranks a differing outcome, which outranks an open question. */
export function verdictOf(evidence: Check[], outcome: Check[]): Verdict {
  if (evidence.some((c) => c.status === 'fail')) return 'evidence-invalid';
  if (outcome.some((c) => c.status === 'fail')) return 'differs-from-model';
  if ([...evidence, ...outcome].some((c) => c.status === 'inconclusive')) return 'inconclusive';
  return 'matches-model';
}

export interface RolloutSection {
  templateBefore: string;
  templateAfter: string;
  exposure: 'expected' | 'possible' | 'none';
  /** What the new template alone would have predicted: the pitfall. */
  templateExposure: 'expected' | 'possible' | 'none';
  /** The kubelet's rules the prediction used: those of the cluster's minor (theory.ts rulesFor). */
  rules: { minor: string; source: string };
  steps: string[];
  requests: { total: number; failed: number; oldFailed: number };
  /** Times in seconds from the template change; null when not seen. */
  pods: {
    name: string;
    uid: string;
    revision: 'old' | 'new' | null;
    template: string | null;
    live: string | null;
    created: number | null;
    ready: number | null;
    endpointRemoved: number | null;
    term: number | null;
    ended: number | null;
    /** Failed requests attributed to it first (without an answer: the candidate that got TERM last). */
    exitCode: number | null;
    failed: number;
  }[];
  causes: Record<string, number>;
  /** Each request: when it was sent (seconds from the template change) and how it ended. */
  points: { t: number; outcome: string }[];
}
