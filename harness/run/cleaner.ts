// A last-in-first-out cleaner, as chainsaw's: each thing a scenario makes registers how to undo
// it; in `finally` the steps run in reverse order, each retried within the outage budget (no
// abort signal: Ctrl-C must not stop cleanup), NotFound counting as done, and every step recorded.
import { apiErrorText, isNotFound } from '../kube/index.ts';
import type { Observation } from '../observation/schema.ts';
import type { RunClock } from './clock.ts';

/** 'done', 'gone' (already gone: done too), or 'skipped' (nothing to do; not recorded). */
export type StepResult = 'done' | 'gone' | 'skipped';

type Step = { action: string; run: () => Promise<StepResult> };

export class Cleaner {
  private readonly steps: Step[] = [];
  private readonly clock: RunClock;

  constructor(clock: RunClock) {
    this.clock = clock;
  }

  defer(action: string, run: () => Promise<StepResult>): void {
    this.steps.push({ action, run });
  }

  /** Runs every step, newest first; one failing step never stops the others. */
  async run(): Promise<Observation['cleanup']> {
    const record: Observation['cleanup'] = [];
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        const result = await step.run();
        if (result !== 'skipped')
          record.push({
            action: step.action,
            at: this.clock.now(),
            ok: true,
            error: result === 'gone' ? 'already gone' : null,
          });
      } catch (error) {
        const gone = isNotFound(error);
        record.push({
          action: step.action,
          at: this.clock.now(),
          ok: gone,
          error: gone ? 'already gone' : apiErrorText(error),
        });
      }
    }
    return record;
  }
}
