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
  kind: 'request' | 'grace' | 'hook' | 'term' | 'terminated' | 'deleted';
  /** Seconds relative to the delete being issued. */
  start: number;
  end: number;
  source: 'harness' | 'container-log' | 'inferred' | 'model';
}

export interface GradeResult {
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
  labPair: { id: string; role: 'short' | 'restored' } | null;
  podUid: string | null;
  outcome: string;
  exitCode: number | null;
  reason: string | null;
  verdict: Verdict;
  explanation: string;
  /** Things a reader should know that are not checks: an old schema version read. */
  notes: string[];
  prediction: Prediction;
  checks: Check[];
  timeline: TimelineBar[];
  deleteWall: string | null;
}

export const pass = (id: string, reason: string): Check => ({ id, status: 'pass', reason });
export const fail = (id: string, reason: string): Check => ({ id, status: 'fail', reason });
export const inconclusive = (id: string, reason: string): Check => ({ id, status: 'inconclusive', reason });
