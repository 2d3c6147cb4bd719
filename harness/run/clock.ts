// One monotonic clock per run: ms since the run started, with the wall time it maps to.
import { performance } from 'node:perf_hooks';
import type { HarnessTime } from '../observation.ts';

export class RunClock {
  private readonly origin = performance.now();

  now(): HarnessTime {
    const at = performance.now();
    return { mono: Math.round((at - this.origin) * 1000) / 1000, wall: new Date(performance.timeOrigin + at).toISOString() };
  }
}
