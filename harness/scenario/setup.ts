import { describePreStop, type Scenario } from './schema.ts';

/** The setup a student reasons from: everything but the answer. */
export function describeSetup(s: Scenario): string {
  return `${s.mode}, preStop ${describePreStop(s.preStop)}, grace ${s.terminationGracePeriodSeconds}s, work ${s.workMs / 1000}s, delete after ${s.deleteDelayMs / 1000}s`;
}
