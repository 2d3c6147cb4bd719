// One errors module: every failure carries a stable code plus its context; callers match on code.
export type ErrorCode =
  | 'USAGE'
  | 'INPUT_UNREADABLE'
  | 'INPUT_TOO_LARGE'
  | 'OBSERVATION_INVALID'
  | 'SCENARIO_INVALID'
  | 'PREDICTIONS_INVALID'
  | 'CLUSTER_UNREACHABLE'
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

/** Exit codes: 0 all passed, 1 a check failed or was inconclusive, 2 bad input, 3 cluster unreachable, 70 a bug in termlab, 130 interrupted. */
export const EXIT = { ok: 0, checksFailed: 1, badInput: 2, clusterUnreachable: 3, internalError: 70, interrupted: 130 } as const;

export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case 'CLUSTER_UNREACHABLE': return EXIT.clusterUnreachable;
    case 'INTERRUPTED': return EXIT.interrupted;
    case 'POD_NOT_READY':
    case 'POD_CAP_REACHED': return EXIT.checksFailed;
    default: return EXIT.badInput;
  }
}

export function isTermlabError(error: unknown): error is TermlabError {
  return error instanceof TermlabError;
}
