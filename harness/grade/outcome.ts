// Outcome checks: the same accepted request's fate and the exit state, against the model.
// Timing never grades; it only attributes a result, with at least a second of tolerance.
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { incompleteReasonOf } from '../observation/incomplete.ts';
import { apiSecondsToEnd } from './citations.ts';
import { describeLine, watchHadGap } from './sources.ts';
import { KUBELET_EXTRA_DELAY_SECONDS, type KubeletRules, TOLERANCE_SECONDS, type Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

export function requestOutcome(f: Facts, p: Prediction): Check {
  const id = 'outcome.request';
  const seen = f.o.request.outcome;
  switch (seen) {
    case 'transport-failed':
      return inconclusive(
        id,
        `the connection to the pod failed (${f.o.request.errorCode ?? 'no code'}) outside the server: this says nothing about shutdown; run it again`,
      );
    case 'not-sent':
      return inconclusive(id, 'the request was never sent');
    case 'rejected':
      return fail(
        id,
        `the request was rejected (HTTP ${f.o.request.status}) instead of being accepted: it reached a server that was already draining`,
      );
  }
  if (tooCloseToCall(p)) {
    return inconclusive(
      id,
      `the request ${seen === 'completed' ? 'completed' : 'was cut'}; the model says ${p.outcome}, but its work ends within ${within(p)} of the ${killWord(p)}: too close to call`,
    );
  }
  if (seen === p.outcome)
    return pass(
      id,
      `the request ${seen === 'completed' ? 'completed with its done line' : `was cut (${f.o.request.errorCode ?? 'no done line'})`}, as the model predicts`,
    );
  if (tooCloseToDiffer(p))
    return inconclusive(
      id,
      `the request ${seen === 'completed' ? 'completed' : 'was cut'}; the model says ${p.outcome}, but its work ends ${within(p)} from the ${killWord(p)}, less than the node's own jitter: too close to call`,
    );
  const late = kubeletLate(f);
  return fail(
    id,
    seen === 'completed'
      ? `the request completed, but the model says it is cut at ${cutAt(p)}: ${late ?? 'check the grace and the hook'}`
      : `the request was cut (${f.o.request.errorCode ?? 'no done line'}), but the model says it completes: the server did not get the time the grace allows`,
  );
}

/**
 * A kubelet that sent TERM well after the hook ended (the model: as it returns; kubelets add up to
 * KUBELET_EXTRA_DELAY_SECONDS) was itself late: stalled or starved (on the node: SIGSTOPped for 5 s).
 * Both lines are the container's own clock. Names the step; the verdict stays the kubelet's.
 */
function kubeletLate(f: Facts): string | null {
  const lines = f.lab;
  const hookEnd = lines.find((l) => l.event === 'hook-end');
  const term = lines.find((l) => l.event === 'signal');
  if (!hookEnd || !term) return null;
  const gap = (wallMs(term.time) - wallMs(hookEnd.time)) / 1000;
  if (!(gap > KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS)) return null;
  return `the kubelet sent TERM ${gap.toFixed(1)}s after the hook ended (${describeLine(hookEnd)}, ${describeLine(term)}), where the model sends it as the hook returns (kubelets add up to ${KUBELET_EXTRA_DELAY_SECONDS}s): the kubelet was late (stalled or overloaded), so the work outlived the grace; the node, not the grace, decided this`;
}

/**
 * The one tolerance rule for outcome and exit code: when the work ends within the tolerance of
 * the kill (or of TERM in immediate mode), which side it lands on is timing, and timing never grades.
 * Exactly at the kill the model says "completed" (the work's end is not after the kill), but
 * either observed result, agreeing or not, is inconclusive: a match there would be luck.
 */
export function tooCloseToCall(p: Prediction): boolean {
  return p.marginSeconds < p.resolutionSeconds;
}

/**
 * A run on the other side of the kill (or TERM) than the model is "differs" only a second or more from it.
 * The observed TERM resolves a match to 0.1 s, but the kill is the runtime's timer from the signal, not a
 * line the server logs: TERM → SIGKILL was the remainder ±0.03 s in every fidelity run (1.35-1.37, node and
 * simulator), yet under load the timer fires late (0.31 s in check:model) and the server logs TERM late, as
 * its work timer fires late. That jitter is sub-second and unbounded by the evidence, and sub-second timing
 * is never graded (TOLERANCE_SECONDS), whatever the exit code says.
 */
export function tooCloseToDiffer(p: Prediction): boolean {
  return p.marginSeconds < Math.max(p.resolutionSeconds, TOLERANCE_SECONDS);
}
/** A predicted time to the millisecond (observed times are read off the server's clock to the microsecond). */
const at = (seconds: number) => String(Math.round(seconds * 1000) / 1000);
/** The margin as finely as its basis resolves it: tenths of a second from the window, milliseconds from observed times. */
const within = (p: Prediction) =>
  `${p.marginSeconds.toFixed(p.basis === 'observed' ? 3 : 1)}s${p.basis === 'observed' ? ' (by the observed TERM)' : ''}`;
const killWord = (p: Prediction) => (p.exitCode === IMMEDIATE_EXIT_CODE ? 'TERM' : 'kill');
/** When the model cuts the request: a server that leaves at once is cut at its TERM, others at the SIGKILL. */
const cutAt = (p: Prediction) =>
  p.exitCode === IMMEDIATE_EXIT_CODE
    ? `${at(p.termAt)}s after the delete, at its TERM`
    : `${at(p.killAt)}s after the delete`;

/** The lab server's own exit code for "left at once on TERM" (the pod contract). */
const IMMEDIATE_EXIT_CODE = LAB_EXIT_CODES.immediate;
const SIGKILL_EXIT_CODE = 137;
/** containerd's reason for each end (container_status.go). */
const reasonFor = (exitCode: number) => (exitCode === 0 ? 'Completed' : 'Error');

export function exitState({ o }: Facts, p: Prediction): Check {
  const id = 'outcome.exit-code';
  const final = o.finalState;
  if (!final) return inconclusive(id, 'no final container state to compare');
  const shown = `exit code ${final.exitCode} (${final.reason ?? 'no reason'})`;
  // Only a server the model sees allocating past its limit on TERM (theory.ts memoryKillAfterTerm) is killed for memory.
  if (final.reason === 'OOMKilled' && p.reason !== 'OOMKilled')
    return fail(id, `${shown}: the memory limit killed the container, not the grace period`);
  if (p.reason === 'OOMKilled' && final.reason !== 'OOMKilled') {
    const wanted = 'the model predicts the kernel kills it for memory after TERM: 137 (OOMKilled)';
    if (!tooCloseToDiffer(p)) return fail(id, `${shown}, but ${wanted}`);
    // Within the resolution the rules below say so; between it and the jitter, never a pass on the code alone.
    if (!tooCloseToCall(p))
      return inconclusive(
        id,
        `${shown}; ${wanted}, but the limit and the kill (or the work's end) are ${within(p)} apart, less than the node's own jitter: too close to call`,
      );
  }
  if (final.reason === 'ContainerStatusUnknown')
    return inconclusive(id, `${shown}: the kubelet lost the container, so its exit code says nothing about the grace`);
  if (final.reason === 'OOMKilled') {
    if (tooCloseToCall(p))
      return inconclusive(
        id,
        `${shown}; the model predicts ${p.exitCode} (${p.reason}), but the limit and the kill (or the work's end) are within ${within(p)}: too close to call`,
      );
    return final.exitCode === p.exitCode
      ? pass(id, `${shown}, as the model predicts: the allocation on TERM crossed the memory limit`)
      : fail(id, `${shown}, but the kernel's OOM kill gives 137`);
  }
  if (final.reason !== null && final.reason !== reasonFor(final.exitCode))
    return fail(
      id,
      `${shown}: the runtime reports exit ${final.exitCode} as ${reasonFor(final.exitCode)}, so this state is not one a kill or an exit gives`,
    );
  const expected = `the model predicts ${p.exitCode} (${p.reason})`;
  if (tooCloseToCall(p))
    return inconclusive(
      id,
      `${shown}; ${expected}, but the work ends within ${within(p)} of the ${killWord(p)}: too close to call`,
    );
  if (final.exitCode === p.exitCode) return pass(id, `${shown}, as the model predicts`);
  if (tooCloseToDiffer(p))
    return inconclusive(
      id,
      `${shown}; ${expected}, but the work ends ${within(p)} from the ${killWord(p)}, less than the node's own jitter: too close to call`,
    );
  return fail(id, `${shown}, but ${expected}`);
}

/**
 * Seconds from the delete to the container's end, by each clock that measured it. `apiLag` is how
 * much later than the harness's delete the API may have stamped its own: between the delete issued
 * and its answer (under load, up to a second or more). The API's span is measured from its own stamp.
 */
function secondsToTermination(f: Facts): { seconds: number; basis: string; apiLag: number }[] {
  const spans: { seconds: number; basis: string; apiLag: number }[] = [];
  const api = apiSecondsToEnd(f);
  const { deleteIssued, deleteAcknowledged } = f.timeline;
  const apiLag =
    deleteIssued && deleteAcknowledged ? Math.max(0, (deleteAcknowledged.at.mono - deleteIssued.at.mono) / 1000) : 0;
  if (api !== null)
    spans.push({ seconds: api, basis: 'API times (finishedAt − deletionTimestamp + grace, whole seconds)', apiLag });
  const issued = f.timeline.deleteIssued,
    terminated = f.timeline.containerTerminated;
  // After a watch gap the harness saw the end only when the API came back: that time places nothing
  // (api-times has already checked that it is not before the API's own end).
  if (issued && terminated && !watchHadGap(f.o, terminated.at.mono))
    spans.push({
      seconds: (terminated.at.mono - issued.at.mono) / 1000,
      basis: 'harness clock (delete issued → terminated seen)',
      apiLag: 0,
    });
  return spans;
}

/** `rules`: the kubelet's of the cluster's minor (theory.ts rulesFor), whose reaction the kill's window allows. */
/** Why a lab server leaves at once on TERM: its immediate mode, or a graceful one that drains on another signal. */
function fastStopWhy(f: Facts): string {
  const drain = f.o.scenario.drainSignal;
  return drain && drain !== 'SIGTERM' ? `it drains only on ${drain}` : 'immediate mode';
}

export function attributeExitCode(f: Facts, p: Prediction, rules: KubeletRules): Check {
  const id = 'attribution.exit-code';
  const final = f.o.finalState;
  if (!final) return inconclusive(id, 'no exit code to attribute');
  const termSeen = f.timeline.termReceived !== null;
  const hookSeen = f.timeline.hookStart !== null;
  switch (final.exitCode) {
    case 0:
      return attribute0(f, p, termSeen);
    case IMMEDIATE_EXIT_CODE:
      return termSeen
        ? pass(id, `exit ${IMMEDIATE_EXIT_CODE} is the lab server leaving at once on TERM (${fastStopWhy(f)})`)
        : inconclusive(
            id,
            `exit ${IMMEDIATE_EXIT_CODE} but no TERM line in the container log: cannot tie it to the signal`,
          );
    case 143:
      return pass(id, 'exit 143 is death by SIGTERM with no handler');
    case SIGKILL_EXIT_CODE:
      return attribute137(f, p, rules, termSeen, hookSeen);
    default:
      return inconclusive(id, `exit code ${final.exitCode} is not one the lab server produces on shutdown`);
  }
}

/** An exit 0 is the server leaving once its work is done: every clock must put it where the model's exitAt is, as a 137's must sit at the kill. */
function attribute0(f: Facts, p: Prediction, termSeen: boolean): Check {
  const id = 'attribution.exit-code';
  const high = p.exitAt + KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;
  // The work runs from the acceptance, so from an API stamp that came `apiLag` late its end comes that much sooner (never before TERM).
  const lowFor = (s: { apiLag: number }) => Math.max(p.termAt, p.exitAt) - s.apiLag - TOLERANCE_SECONDS;
  const outside = secondsToTermination(f).filter((s) => s.seconds < lowFor(s) || s.seconds > high);
  if (outside.length) {
    return inconclusive(
      id,
      `exit 0 not where the model puts it: ${outside.map((s) => `it ended ${s.seconds.toFixed(1)}s after the delete by ${s.basis} (window ${lowFor(s).toFixed(2)}–${high.toFixed(2)}s${s.apiLag ? `, from the API's own deletion stamp, which may be up to ${s.apiLag.toFixed(2)}s after the harness's delete` : ''})`).join('; ')}; the model's exit is at ${p.exitAt}s`,
    );
  }
  return pass(id, termSeen ? 'exited 0 after TERM, once its work was done' : 'exited 0');
}

function attribute137(f: Facts, p: Prediction, rules: KubeletRules, termSeen: boolean, hookSeen: boolean): Check {
  const id = 'attribution.exit-code';
  const reason = f.o.finalState?.reason ?? null;
  if (reason === 'OOMKilled')
    return p.reason === 'OOMKilled'
      ? attributeMemoryKill(f, p, rules, termSeen)
      : fail(id, '137 with reason OOMKilled: the memory limit, not the grace period');
  const missing: string[] = [];
  if (reason === 'ContainerStatusUnknown')
    missing.push('reason ContainerStatusUnknown: the kubelet lost the container');
  if (!termSeen && !hookSeen) missing.push('no TERM or hook was seen in the container log');
  if (f.o.evidence.podEvents.length && !f.o.evidence.podEvents.some((e) => e.reason === 'Killing'))
    missing.push("the pod's events have no Killing event");
  const { requestEnded, deleteIssued } = f.timeline;
  // Only a kill the deadline started (theory.ts) ends the request before the delete.
  if (
    p.cause === 'delete' &&
    f.o.request.outcome === 'cut' &&
    requestEnded &&
    deleteIssued &&
    requestEnded.at.mono < deleteIssued.at.mono
  )
    missing.push('the request ended before the delete');
  const spans = secondsToTermination(f);
  if (!spans.length) missing.push('no times to place the kill');
  // From an API stamp that came apiLag after the harness's delete, the end comes that much sooner.
  const lowFor = (s: { apiLag: number }) => p.killEarliestAt - s.apiLag - TOLERANCE_SECONDS;
  // The kubelet acts a moment after the delete (its reaction time), so the kill can come that much later.
  const high = p.killAt + rules.kubeletReactionSeconds + KUBELET_EXTRA_DELAY_SECONDS + TOLERANCE_SECONDS;
  // Every clock that measured the end must put it in the window: one edited time cannot carry it.
  for (const span of spans) {
    const low = lowFor(span);
    if (span.seconds < low || span.seconds > high) {
      missing.push(
        `it ended ${span.seconds.toFixed(1)}s after the delete by ${span.basis}; the grace runs out at ${p.killAt}s (window ${low.toFixed(2)}–${high}s)`,
      );
    }
  }
  if (missing.length) return inconclusive(id, `137 not explained by the grace period: ${missing.join('; ')}`);
  const ends = spans.map((s) => `${s.seconds.toFixed(1)}s by ${s.basis}`).join(', ');
  return pass(
    id,
    `killed after the grace period ran out: TERM at ${at(p.termAt)}s, SIGKILL at ${at(p.killAt)}s after the delete, ended ${ends}`,
  );
}

/** An OOM kill the model predicts: after TERM (the allocation's start, logged), by the time the allocation alone reaches the limit. */
function attributeMemoryKill(f: Facts, p: Prediction, rules: KubeletRules, termSeen: boolean): Check {
  const id = 'attribution.exit-code';
  const missing: string[] = [];
  if (!termSeen) missing.push('no TERM was seen in the container log');
  if (f.logComplete && !f.lab.some((l) => l.event === 'allocating'))
    missing.push('the complete container log has no line of the server allocating on TERM');
  const spans = secondsToTermination(f);
  if (!spans.length) missing.push('no times to place the end');
  const high =
    p.exitAt +
    (p.basis === 'window' ? rules.kubeletReactionSeconds : 0) +
    KUBELET_EXTRA_DELAY_SECONDS +
    TOLERANCE_SECONDS;
  for (const span of spans) {
    const low = p.termAt - span.apiLag - TOLERANCE_SECONDS;
    if (span.seconds < low || span.seconds > high)
      missing.push(
        `it ended ${span.seconds.toFixed(1)}s after the delete by ${span.basis}; the memory limit is reached by ${at(p.exitAt)}s (window ${low.toFixed(2)}–${high.toFixed(2)}s)`,
      );
  }
  if (missing.length)
    return inconclusive(id, `137 OOMKilled not explained by the allocation on TERM: ${missing.join('; ')}`);
  return pass(
    id,
    `killed for memory after TERM (${at(p.termAt)}s), as the allocation reached the limit by ${at(p.exitAt)}s: ended ${spans.map((s) => `${s.seconds.toFixed(1)}s by ${s.basis}`).join(', ')}`,
  );
}

export function runComplete({ o }: Facts): Check {
  const id = 'evidence.run-complete';
  if (!o.run.complete) return inconclusive(id, `the run stopped before it finished: ${incompleteReasonOf(o.run)}`);
  const gaveUp = o.evidence.watchLifecycle.find((w) => w.event === 'gave-up');
  if (gaveUp)
    return inconclusive(id, `the pod watch gave up (${gaveUp.detail ?? 'no detail'}): events after it are missing`);
  if (o.evidence.logEndedEarly)
    return inconclusive(
      id,
      'the container log stream ended before the container did: hook and TERM lines may be missing',
    );
  const gaps = o.evidence.watchLifecycle.filter((w) => w.event === 'resumed' || w.event === 'expired-relisted').length;
  return pass(
    id,
    gaps
      ? `the run finished; the watch was resumed ${gaps} time(s) without losing the final state`
      : 'the run finished with an unbroken watch and log',
  );
}
