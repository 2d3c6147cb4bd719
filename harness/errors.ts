// One errors module: every failure carries a stable code plus its context; callers match on code.
export type ErrorCode =
  | 'USAGE'
  | 'INPUT_UNREADABLE'
  | 'INPUT_TOO_LARGE'
  | 'OUTPUT_UNWRITABLE'
  | 'OBSERVATION_INVALID'
  | 'SCENARIO_INVALID'
  | 'PREDICTIONS_INVALID'
  | 'ARCHIVE_INVALID'
  | 'LAB_INVALID'
  | 'CLUSTER_UNREACHABLE'
  /** The API stayed unreachable (refused, reset, timed out, 429/5xx) past --api-patience. */
  | 'API_UNREACHABLE'
  /** The API answered with a refusal that retrying cannot change (a 4xx other than 429, a TLS error). */
  | 'API_REJECTED'
  | 'POD_NOT_READY'
  | 'POD_CAP_REACHED'
  | 'INTERRUPTED'
  | 'PLATFORM_UNSUPPORTED';

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

/** Exit codes: 0 all passed, 1 a check failed or was inconclusive, 2 bad input, 3 cluster unreachable, 4 a class gradebook needs the instructor's review, 70 a bug in termlab, 130 interrupted. */
export const EXIT = { ok: 0, checksFailed: 1, badInput: 2, clusterUnreachable: 3, needsReview: 4, internalError: 70, interrupted: 130 } as const;

/** Every code has its exit code: the type checker refuses a code left out. */
const EXIT_FOR_CODE: Record<ErrorCode, number> = {
  USAGE: EXIT.badInput,
  INPUT_UNREADABLE: EXIT.badInput,
  INPUT_TOO_LARGE: EXIT.badInput,
  OBSERVATION_INVALID: EXIT.badInput,
  SCENARIO_INVALID: EXIT.badInput,
  PREDICTIONS_INVALID: EXIT.badInput,
  CLUSTER_UNREACHABLE: EXIT.clusterUnreachable,
  API_UNREACHABLE: EXIT.clusterUnreachable,
  API_REJECTED: EXIT.clusterUnreachable,
  ARCHIVE_INVALID: EXIT.badInput,
  LAB_INVALID: EXIT.badInput,
  OUTPUT_UNWRITABLE: EXIT.badInput,
  PLATFORM_UNSUPPORTED: EXIT.badInput,
  POD_NOT_READY: EXIT.checksFailed,
  POD_CAP_REACHED: EXIT.checksFailed,
  INTERRUPTED: EXIT.interrupted,
};

export function exitCodeFor(code: ErrorCode): number {
  return EXIT_FOR_CODE[code];
}

export function isTermlabError(error: unknown): error is TermlabError {
  return error instanceof TermlabError;
}
