// One errors module: every failure carries a stable code plus its context; callers match on code.
export type ErrorCode =
  | 'USAGE'
  | 'INPUT_UNREADABLE'
  | 'INPUT_TOO_LARGE'
  /** A witness export (`termlab class witness export`) that is not one; names the file and the field. */
  | 'WITNESS_INVALID'
  /** An output path (--output-dir, reports/latest, a report file) that cannot be made or written; names the path. */
  | 'OUTPUT_UNWRITABLE'
  /** termlab's own state directory (run records) cannot be made or written; names the path. */
  | 'STATE_UNWRITABLE'
  | 'OBSERVATION_INVALID'
  | 'SCENARIO_INVALID'
  | 'PREDICTIONS_INVALID'
  /** A predictions file other than the one the run sealed, offered to `pack`; names both hashes. */
  | 'PREDICTIONS_NOT_SEALED'
  | 'ARCHIVE_INVALID'
  | 'LAB_INVALID'
  | 'CLUSTER_UNREACHABLE'
  /** The API stayed unreachable (refused, reset, timed out, 429/5xx) past --api-patience. */
  | 'API_UNREACHABLE'
  /** The API answered with a refusal that retrying cannot change (a 4xx other than 429, a TLS error). */
  | 'API_REJECTED'
  /** The class is not on the cluster as `termlab class` needs it (manifests/class.yaml not applied, or its ConfigMap wrong, or the class full). */
  | 'CLASS_NOT_READY'
  /** The namespace's ResourceQuota stayed full past --quota-wait: names the quota and its use. */
  | 'QUOTA_FULL'
  | 'POD_NOT_READY'
  /** The simulated cluster's edge (`--edge`) could not be installed or did not become Ready; names what it saw. */
  | 'SIM_EDGE_NOT_READY'
  /** The scenario's pod was gone, or another pod had its name, before the harness was done with it. */
  | 'POD_GONE_EARLY'
  /** The lab server did not accept the scenario's request (refused, reset, or an answer other than the accepted line). */
  | 'REQUEST_NOT_ACCEPTED'
  /** The container was not seen to end within the grace, the hook and the margin for a slow kubelet. */
  | 'CONTAINER_NOT_ENDED'
  /** `termlab run`'s rollout lab: its own Deployment's rollout did not complete within the scenario's limit; a scenario ended early (exit 1), its Deployment deleted by the cleanup. Not ROLLOUT_STALLED. */
  | 'ROLLOUT_NOT_COMPLETE'
  /** The rollout's load pod did not log the end of its load in time. */
  | 'LOAD_NOT_ENDED'
  /** `termlab verify`: the rollout it started on a team's Deployment did not complete (ProgressDeadlineExceeded, or verify's own bound): exit 5, the Deployment is left mid-rollout for its owner to undo; names what it waited for. */
  | 'ROLLOUT_STALLED'
  /** `termlab verify --via`: the route, its Gateway or the edge's address could not be found (no parentRef, a Gateway or Ingress without an address and no edge Service); names which. */
  | 'EDGE_NOT_FOUND'
  | 'POD_CAP_REACHED'
  | 'INTERRUPTED'
  | 'PLATFORM_UNSUPPORTED'
  /** A dev tool (dev/) could not set up or take down what it works on: a program missing or exiting non-zero, the kind cluster already there, a step of cluster:up; names the step. */
  | 'SETUP_FAILED'
  /** A dev tool's checks did not hold (fidelity --check's sides disagree, check:model's model and simulator, a fault or class case not as expected) or its measurement could not be made; the tool has printed each. */
  | 'CHECKS_FAILED';

export class TermlabError extends Error {
  readonly code: ErrorCode;
  readonly context: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TermlabError';
    this.code = code;
    this.context = context;
  }
}

/** Exit codes: 0 all passed, 1 a check failed or was inconclusive (a dev tool: or a step of its set-up failed), 2 bad input, 3 cluster unreachable, 4 a class gradebook needs the instructor's review, 5 a rollout verify started did not complete (the Deployment is left mid-rollout), 70 a bug in termlab, 130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM (128 + the signal's number, the shell's convention). */
export const EXIT = {
  ok: 0,
  checksFailed: 1,
  badInput: 2,
  clusterUnreachable: 3,
  needsReview: 4,
  rolloutStalled: 5,
  edgeNotFound: 6,
  internalError: 70,
  interrupted: 130,
  terminated: 143,
} as const;

/** The signals that stop a command cleanly: what each is called in what termlab prints, and its exit code. */
export const STOP_SIGNALS = {
  SIGINT: { words: 'Ctrl-C', exit: EXIT.interrupted },
  SIGTERM: { words: 'SIGTERM', exit: EXIT.terminated },
} as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** The reason a command's signal is aborted with when a signal stops it: which one. */
export class Interrupted extends Error {
  readonly signal: StopSignal;
  constructor(signal: StopSignal) {
    super(`interrupted (${STOP_SIGNALS[signal].words})`);
    this.name = 'Interrupted';
    this.signal = signal;
  }
}

/** The signal that stopped a command, read from its aborted signal; an abort that names none counts as Ctrl-C. */
export function stopSignalOf(signal: AbortSignal): StopSignal {
  const reason = signal.reason as { name?: unknown; signal?: unknown } | undefined;
  return reason?.name === 'Interrupted' && reason.signal === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
}

/** "interrupted (Ctrl-C)" or "interrupted (SIGTERM)": how an observation, a report and the last line name the stop. */
export function interruptedWords(signal: AbortSignal): string {
  return `interrupted (${STOP_SIGNALS[stopSignalOf(signal)].words})`;
}

/** 130 after Ctrl-C, 143 after SIGTERM. */
export function interruptedExit(signal: AbortSignal): number {
  return STOP_SIGNALS[stopSignalOf(signal)].exit;
}

/** Every code has its exit code: the type checker refuses a code left out. */
const EXIT_FOR_CODE: Record<ErrorCode, number> = {
  USAGE: EXIT.badInput,
  INPUT_UNREADABLE: EXIT.badInput,
  INPUT_TOO_LARGE: EXIT.badInput,
  WITNESS_INVALID: EXIT.badInput,
  OBSERVATION_INVALID: EXIT.badInput,
  SCENARIO_INVALID: EXIT.badInput,
  PREDICTIONS_INVALID: EXIT.badInput,
  PREDICTIONS_NOT_SEALED: EXIT.badInput,
  CLUSTER_UNREACHABLE: EXIT.clusterUnreachable,
  API_UNREACHABLE: EXIT.clusterUnreachable,
  API_REJECTED: EXIT.clusterUnreachable,
  ARCHIVE_INVALID: EXIT.badInput,
  LAB_INVALID: EXIT.badInput,
  OUTPUT_UNWRITABLE: EXIT.badInput,
  STATE_UNWRITABLE: EXIT.badInput,
  PLATFORM_UNSUPPORTED: EXIT.badInput,
  CLASS_NOT_READY: EXIT.clusterUnreachable,
  QUOTA_FULL: EXIT.clusterUnreachable,
  POD_NOT_READY: EXIT.checksFailed,
  SIM_EDGE_NOT_READY: EXIT.clusterUnreachable,
  POD_GONE_EARLY: EXIT.checksFailed,
  REQUEST_NOT_ACCEPTED: EXIT.checksFailed,
  CONTAINER_NOT_ENDED: EXIT.checksFailed,
  ROLLOUT_NOT_COMPLETE: EXIT.checksFailed,
  LOAD_NOT_ENDED: EXIT.checksFailed,
  ROLLOUT_STALLED: EXIT.rolloutStalled,
  EDGE_NOT_FOUND: EXIT.edgeNotFound,
  POD_CAP_REACHED: EXIT.checksFailed,
  INTERRUPTED: EXIT.interrupted,
  SETUP_FAILED: EXIT.checksFailed,
  CHECKS_FAILED: EXIT.checksFailed,
};

export function exitCodeFor(code: ErrorCode): number {
  return EXIT_FOR_CODE[code];
}

/** Gravest first: when several failures end one command, its exit code is the gravest one's. */
const EXIT_GRAVITY: readonly number[] = [
  EXIT.terminated,
  EXIT.interrupted,
  EXIT.internalError,
  EXIT.clusterUnreachable,
  EXIT.rolloutStalled,
  EXIT.needsReview,
  EXIT.badInput,
  EXIT.checksFailed,
  EXIT.ok,
];

export function gravestExit(codes: readonly number[]): number {
  // A code not in the list is taken as the gravest.
  const rank = (code: number) => Math.max(0, EXIT_GRAVITY.indexOf(code));
  return codes.reduce((worst, code) => (rank(code) < rank(worst) ? code : worst), EXIT.ok);
}

/** A file-system failure (mkdir, write, rename) as the error that names the path and what it was for. */
export function unwritable(
  code: 'OUTPUT_UNWRITABLE' | 'STATE_UNWRITABLE',
  what: string,
  path: string,
  cause: unknown,
): TermlabError {
  const reason =
    (cause as NodeJS.ErrnoException | null)?.code ?? (cause instanceof Error ? cause.message : String(cause));
  return new TermlabError(code, `${what} ${path} cannot be written (${reason})`, { path }, { cause });
}

export function isTermlabError(error: unknown): error is TermlabError {
  return error instanceof TermlabError;
}
