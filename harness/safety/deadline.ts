// The one function that bounds a lab pod's life. The pod's activeDeadlineSeconds, the progress
// display and the reaper all use it, so "time left" never disagrees between them.
import { hookDurationSeconds, type Scenario } from '../scenario/schema.ts';

/** Room for start-up, readiness and the watch to see the end. */
const DEADLINE_MARGIN_SECONDS = 60;

/**
 * work + delay + hook + grace + margin, in whole seconds: even if termlab is killed outright,
 * the kubelet ends the pod by then.
 */
export function podDeadlineSeconds(scenario: Scenario): number {
  const workAndDelay = Math.ceil((scenario.workMs + scenario.deleteDelayMs) / 1000);
  const hook = Math.ceil(hookDurationSeconds(scenario.preStop));
  // A retry scenario's pods (the standby and the ledger too) outlive the first attempt by every retry.
  const retries = scenario.retry
    ? Math.ceil(((scenario.retry.attempts - 1) * (scenario.workMs + scenario.retry.backoffMs)) / 1000)
    : 0;
  return workAndDelay + hook + scenario.terminationGracePeriodSeconds + retries + DEADLINE_MARGIN_SECONDS;
}

/** Seconds left of a deadline (activeDeadlineSeconds) counted from a start (ms since the epoch). */
export function secondsLeftOf(deadlineSeconds: number, startedAtMs: number, nowMs: number = Date.now()): number {
  return Math.max(0, deadlineSeconds - (nowMs - startedAtMs) / 1000);
}
