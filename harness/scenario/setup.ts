import { describePreStop, type Scenario } from './schema.ts';

/** The setup a student reasons from: everything but the answer. */
export function describeSetup(s: Scenario): string {
  return `${s.mode}, preStop ${describePreStop(s.preStop)}, grace ${s.terminationGracePeriodSeconds}s, work ${s.workMs / 1000}s, delete after ${s.deleteDelayMs / 1000}s${s.drainSignal ? `, drains on ${s.drainSignal}` : ''}${s.stopSignal ? `, lifecycle.stopSignal ${s.stopSignal}` : ''}${s.sidecar ? `, behind a proxy (${s.sidecar.native ? 'native sidecar' : 'regular container'}, ${s.sidecar.onTerm} on TERM, preStop ${describePreStop(s.sidecar.preStop)})` : ''}${s.retry ? `, effect at ${s.effect ?? 'none'}, client retries ${s.retry.attempts - 1}x on ${s.retry.on.join('/')} after ${s.retry.backoffMs}ms through a Service to a ready replica, ${s.retry.idempotencyKey ? 'with' : 'no'} idempotency key` : ''}`;
}
