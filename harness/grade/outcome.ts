// Outcome checks: the same accepted request's fate and the exit state, against the model.
// Timing never grades; it only attributes a result, with at least a second of tolerance.
import type { Observation } from '../observation.ts';
import { KUBELET_EXTRA_DELAY_SECONDS, KUBELET_REACTION_SECONDS, TOLERANCE_SECONDS, type Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';

export function requestOutcome(o: Observation, p: Prediction): Check {
  const id = 'outcome.request';
  const seen = o.request.outcome;
  switch (seen) {
    case 'transport-failed':
      return inconclusive(id, `the connection to the pod failed (${o.request.errorCode ?? 'no code'}) outside the server: this says nothing about shutdown; run it again`);
    case 'not-sent':
      return inconclusive(id, 'the request was never sent');
    case 'rejected':
      return fail(id, `the request was rejected (HTTP ${o.request.status}) instead of being accepted: it reached a server that was already draining`);
  }
  if (seen === p.outcome) return pass(id, `the request ${seen === 'completed' ? 'completed with its done line' : `was cut (${o.request.errorCode ?? 'no done line'})`}, as the model predicts`);
  if (p.marginSeconds < TOLERANCE_SECONDS) {
    return inconclusive(id, `the request ${seen === 'completed' ? 'completed' : 'was cut'}; the model says ${p.outcome}, but its work ends within ${p.marginSeconds.toFixed(1)}s of the kill: too close to call`);
  }
  return fail(id, seen === 'completed'
    ? `the request completed, but the model says it is cut at ${p.killAt}s after the delete: check the grace and the hook`
    : `the request was cut (${o.request.errorCode ?? 'no done line'}), but the model says it completes: the server did not get the time the grace allows`);
}

export function exitState(o: Observation, p: Prediction): Check {
  const id = 'outcome.exit-code';
  const final = o.finalState;
  if (!final) return inconclusive(id, 'no final container state to compare');
  if (final.reason === 'OOMKilled') return fail(id, `exit ${final.exitCode} with reason OOMKilled: the memory limit killed the container, not the grace period`);
  if (final.exitCode === p.exitCode) return pass(id, `exit code ${final.exitCode} (${final.reason ?? 'no reason'}), as the model predicts`);
  return fail(id, `exit code ${final.exitCode} (${final.reason ?? 'no reason'}), but the model predicts ${p.exitCode} (${p.reason})`);
}

/** Seconds from the delete to the container's end, from the API's own whole-second times when it can. */
export function secondsToTermination(o: Observation): { seconds: number; basis: string } | null {
  const ack = o.timeline.deleteAcknowledged;
  const finishedAt = o.finalState?.finishedAt;
  if (ack && finishedAt) {
    // deletionTimestamp = delete time + grace, so finishedAt - (deletionTimestamp - grace) is the API's view.
    const deletedAt = Date.parse(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000;
    return { seconds: (Date.parse(finishedAt) - deletedAt) / 1000, basis: 'API times (finishedAt − deletionTimestamp + grace, whole seconds)' };
  }
  const issued = o.timeline.deleteIssued, terminated = o.timeline.containerTerminated;
  if (issued && terminated) return { seconds: (terminated.at.mono - issued.at.mono) / 1000, basis: 'harness clock (delete issued → terminated seen)' };
  return null;
}

export function attributeExitCode(o: Observation, p: Prediction): Check {
  const id = 'attribution.exit-code';
  const final = o.finalState;
  if (!final) return inconclusive(id, 'no exit code to attribute');
  const termSeen = o.timeline.termReceived !== null;
  const hookSeen = o.timeline.hookStart !== null;
  switch (final.exitCode) {
    case 0:
      return pass(id, termSeen ? 'exited 0 after TERM, once its work was done' : 'exited 0');
    case 17:
      return termSeen
        ? pass(id, 'exit 17 is the lab server leaving at once on TERM (immediate mode)')
        : inconclusive(id, 'exit 17 but no TERM line in the container log: cannot tie it to the signal');
    case 143:
      return pass(id, 'exit 143 is death by SIGTERM with no handler');
    case 137:
      return attribute137(o, p, termSeen, hookSeen);
    default:
      return inconclusive(id, `exit code ${final.exitCode} is not one the lab server produces on shutdown`);
  }
}

function attribute137(o: Observation, p: Prediction, termSeen: boolean, hookSeen: boolean): Check {
  const id = 'attribution.exit-code';
  if (o.finalState?.reason === 'OOMKilled') return fail(id, '137 with reason OOMKilled: the memory limit, not the grace period');
  const missing: string[] = [];
  if (!termSeen && !hookSeen) missing.push('no TERM or hook was seen in the container log');
  const timing = secondsToTermination(o);
  if (!timing) missing.push('no times to place the kill');
  else {
    const low = p.killAt - TOLERANCE_SECONDS;
    const high = p.killAt + KUBELET_REACTION_SECONDS + KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;
    if (timing.seconds < low || timing.seconds > high) {
      missing.push(`it ended ${timing.seconds.toFixed(1)}s after the delete by ${timing.basis}; the grace runs out at ${p.killAt}s (window ${low}–${high}s)`);
    }
  }
  if (missing.length) return inconclusive(id, `137 not explained by the grace period: ${missing.join('; ')}`);
  return pass(id, `killed after the grace period ran out: TERM at ${p.termAt}s, SIGKILL at ${p.killAt}s after the delete, ended ${timing!.seconds.toFixed(1)}s after it (${timing!.basis})`);
}

export function runComplete(o: Observation): Check {
  const id = 'evidence.run-complete';
  if (!o.run.complete) return inconclusive(id, `the run stopped before it finished: ${o.run.incompleteReason ?? 'no reason recorded'}`);
  const gaveUp = o.evidence.watchLifecycle.find((w) => w.event === 'gave-up');
  if (gaveUp) return inconclusive(id, `the pod watch gave up (${gaveUp.detail ?? 'no detail'}): events after it are missing`);
  if (o.evidence.logEndedEarly) return inconclusive(id, 'the container log stream ended before the container did: hook and TERM lines may be missing');
  const gaps = o.evidence.watchLifecycle.filter((w) => w.event === 'resumed' || w.event === 'expired-relisted').length;
  return pass(id, gaps ? `the run finished; the watch was resumed ${gaps} time(s) without losing the final state` : 'the run finished with an unbroken watch and log');
}
