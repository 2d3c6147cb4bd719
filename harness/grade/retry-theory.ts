// The retries model (issue 27): from the policy, the effect point and the first attempt's fate (the
// kubelet model's answer for the deleted pod), the attempts the client makes, the pod each lands on and
// what the ledger counts. A retry goes through the Service both lab pods stand behind: by then the deleted
// pod is terminating, its endpoint no longer ready, so the Service routes it to the standby replica, which is
// never deleted while an attempt runs, and the retry there completes; an effect at the start is made by every accepted attempt, one at the end only by a completed
// one; with an idempotency key the ledger applies the first and answers every later one already-applied.
import type { RetryOn, Scenario } from '../scenario/schema.ts';
import type { RequestOutcome } from './theory.ts';

export interface PredictedAttempt {
  n: number;
  target: 'deleted' | 'standby';
  outcome: RequestOutcome;
  /** What the effect point does in this attempt: reached (applied or already-applied), or never reached. */
  effect: 'applied' | 'already-applied' | 'none';
}

export interface RetryPrediction {
  attempts: PredictedAttempt[];
  /** Records the ledger applies, and effects it answers already-applied. */
  effects: number;
  alreadyApplied: number;
}

const reasonOf = (outcome: RequestOutcome): RetryOn | null => (outcome === 'cut' ? 'cut' : null);

export function predictRetries(scenario: Scenario, first: RequestOutcome): RetryPrediction {
  const policy = scenario.retry;
  const point = scenario.effect ?? 'none';
  const attempts: PredictedAttempt[] = [];
  let effects = 0,
    alreadyApplied = 0;
  let outcome = first;
  for (let n = 1; n <= (policy?.attempts ?? 1); n++) {
    if (n > 1) {
      const reason = reasonOf(outcome);
      if (!reason || !policy!.on.includes(reason)) break;
      outcome = 'completed';
    }
    const reached = point === 'start' || (point === 'end' && outcome === 'completed');
    let effect: PredictedAttempt['effect'] = 'none';
    if (reached) {
      if (policy?.idempotencyKey && effects > 0) {
        effect = 'already-applied';
        alreadyApplied++;
      } else {
        effect = 'applied';
        effects++;
      }
    }
    attempts.push({ n, target: n === 1 ? 'deleted' : 'standby', outcome, effect });
  }
  return { attempts, effects, alreadyApplied };
}

/** The same client with the effect one point earlier (end → start): what the report says luck hid. */
export function withEffectEarlier(scenario: Scenario, first: RequestOutcome): RetryPrediction | null {
  if (scenario.effect !== 'end') return null;
  return predictRetries({ ...scenario, effect: 'start' }, first);
}

/** The attempts and the ledger's count in one line, as `termlab scenarios --reveal` and a graded prediction tell them. */
export function describeRetries(r: RetryPrediction): string {
  const attempts = r.attempts.map(
    (a) => `attempt ${a.n} to the ${a.target} pod ${a.outcome}${a.effect === 'none' ? '' : `, effect ${a.effect}`}`,
  );
  return `retries: ${attempts.join('; ')} → ${r.effects} effect(s)${r.alreadyApplied ? `, ${r.alreadyApplied} already-applied` : ''}`;
}
