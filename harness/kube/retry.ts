// Retry and backoff, once for every API call and watch: transient failures are tried again with
// exponential backoff and jitter (client-go's reflector: 0.8 s doubling to 30 s, jitter 1.0)
// until one outage budget (--api-patience) is spent. A caller's 4xx is never retried.
import { setTimeout as sleep } from 'node:timers/promises';
import { TermlabError } from '../../lib/errors.ts';
import { classify, type Failure } from './failures.ts';

export const BACKOFF_INITIAL_MS = 800;
export const BACKOFF_MAX_MS = 30_000;
const BACKOFF_FACTOR = 2;
/** Each wait is d plus up to jitter × d more, as wait.Jitter does. */
const BACKOFF_JITTER = 1;
export const DEFAULT_API_PATIENCE_MS = 60_000;
/** One request's own limit: a stalled API becomes a timeout, and so a retry. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
/** How often the progress line repeats while the API stays unreachable. */
const OUTAGE_REPORT_EVERY_MS = 4_000;

export class Backoff {
  private nextBaseMs = BACKOFF_INITIAL_MS;
  private readonly random: () => number;
  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  next(): number {
    const base = this.nextBaseMs;
    this.nextBaseMs = Math.min(BACKOFF_MAX_MS, base * BACKOFF_FACTOR);
    return base + this.random() * BACKOFF_JITTER * base;
  }

  reset(): void {
    this.nextBaseMs = BACKOFF_INITIAL_MS;
  }
}

export type OutageReport =
  | { state: 'unreachable'; seconds: number; detail: string }
  | { state: 'reachable'; seconds: number };

/**
 * The API's health as every call of a run sees it. An outage starts with the first transient
 * failure and ends with any answer; the budget is counted from its start, so calls that join a
 * running outage get only what is left of it.
 */
export class ApiHealth {
  readonly patienceMs: number;
  readonly requestTimeoutMs: number;
  private outageStartedAt: number | null = null;
  private reportTimer: NodeJS.Timeout | null = null;
  private readonly backWaiters = new Set<() => void>();
  private lastFailure = '';
  private readonly listeners = new Set<(report: OutageReport) => void>();

  /** The monotonic clock outages are measured on (tests give their own). */
  readonly now: () => number;

  constructor(
    patienceMs = DEFAULT_API_PATIENCE_MS,
    requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
    now: () => number = () => performance.now(),
  ) {
    this.patienceMs = patienceMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.now = now;
  }

  onReport(listener: (report: OutageReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Waits `ms`, or less if another call hears from the API meanwhile: the first to get through
   * wakes the rest instead of leaving them to sleep out their backoff.
   */
  async pause(ms: number, signal?: AbortSignal): Promise<void> {
    const quit = new AbortController();
    const back = new Promise<void>((resolve) => this.backWaiters.add(resolve));
    try {
      await Promise.race([
        sleep(ms, undefined, { signal: signal ? AbortSignal.any([signal, quit.signal]) : quit.signal }),
        back,
      ]);
    } finally {
      quit.abort();
    }
  }

  answered(): void {
    for (const wake of this.backWaiters) wake();
    this.backWaiters.clear();
    if (this.outageStartedAt === null) return;
    const seconds = (this.now() - this.outageStartedAt) / 1000;
    this.outageStartedAt = null;
    if (this.reportTimer) {
      clearInterval(this.reportTimer);
      this.reportTimer = null;
    }
    for (const listener of this.listeners) listener({ state: 'reachable', seconds });
  }

  failed(failure: Failure): void {
    this.lastFailure = failure.text;
    if (this.outageStartedAt !== null) return;
    const startedAt = this.now();
    this.outageStartedAt = startedAt;
    // Said on a clock of its own: the calls themselves may be waiting out a long backoff.
    this.reportTimer = setInterval(() => {
      for (const listener of this.listeners)
        listener({ state: 'unreachable', seconds: (this.now() - startedAt) / 1000, detail: this.lastFailure });
    }, OUTAGE_REPORT_EVERY_MS);
    this.reportTimer.unref();
  }

  /** When the outage began (or `since`, if later calls have not failed yet). */
  outageSince(since: number): number {
    return Math.min(since, this.outageStartedAt ?? since);
  }

  /** When a caller that began failing at `since` must give up. */
  deadline(since: number): number {
    return Math.min(since, this.outageStartedAt ?? since) + this.patienceMs;
  }
}

export interface RetryTarget {
  health: ApiHealth;
  context: string;
  server: string;
}

export interface RetryOptions {
  /** Stops the waiting between tries (Ctrl-C); cleanup passes none, so it goes on within the budget. */
  signal?: AbortSignal;
  backoff?: Backoff;
  /** Told before each attempt (the delete phase keeps the time its delete was issued). */
  onAttempt?: (attempt: number) => void;
  /** Told of each transient failure before the wait (the delete phase records its attempts). */
  onTransientFailure?: (failure: Failure, attempt: number) => void;
}

export function unreachable(target: RetryTarget, what: string, failure: Failure, startedAt: number): TermlabError {
  const seconds = Math.round((target.health.now() - target.health.outageSince(startedAt)) / 1000);
  return new TermlabError(
    'API_UNREACHABLE',
    `${what}: the API of context "${target.context}" (${target.server}) did not answer for ${seconds}s, past --api-patience ${target.health.patienceMs / 1000}s (last: ${failure.text})`,
    { context: target.context, server: target.server, status: failure.status },
  );
}

const interrupted = (what: string) => new TermlabError('INTERRUPTED', `${what}: interrupted while the API was failing`);

export function rejected(target: RetryTarget, what: string, failure: Failure, cause: unknown): TermlabError {
  return new TermlabError(
    'API_REJECTED',
    `${what}: ${failure.text}`,
    { context: target.context, server: target.server, status: failure.status },
    { cause },
  );
}

/**
 * Runs `call` until it succeeds, fails for good, or the outage budget is spent. Every failure
 * comes out as a TermlabError: API_REJECTED (with context.status) or API_UNREACHABLE.
 */
export async function withRetry<T>(
  target: RetryTarget,
  what: string,
  call: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const backoff = options.backoff ?? new Backoff();
  let failingSince: number | null = null;
  for (let attempt = 1; ; attempt++) {
    let failure: Failure;
    options.onAttempt?.(attempt);
    try {
      const result = await call();
      target.health.answered();
      return result;
    } catch (error) {
      failure = classify(error);
      if (!failure.transient) {
        if (failure.status !== null) target.health.answered();
        throw error instanceof TermlabError ? error : rejected(target, what, failure, error);
      }
    }
    target.health.failed(failure);
    options.onTransientFailure?.(failure, attempt);
    failingSince ??= target.health.now();
    const left = target.health.deadline(failingSince) - target.health.now();
    if (options.signal?.aborted) throw interrupted(what);
    if (left <= 0) throw unreachable(target, what, failure, failingSince);
    const waitMs = Math.min(left, Math.max(backoff.next(), (failure.retryAfterSeconds ?? 0) * 1000));
    try {
      await target.health.pause(waitMs, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw interrupted(what);
      throw error;
    }
  }
}
