// One monotonic clock per run: ms since the run started, with the wall time it maps to.
import { performance } from 'node:perf_hooks';
import type { HarnessTime } from '../observation/schema.ts';

export class RunClock {
  private readonly origin = performance.now();

  now(): HarnessTime {
    const at = performance.now();
    return {
      mono: Math.round((at - this.origin) * 1000) / 1000,
      wall: new Date(performance.timeOrigin + at).toISOString(),
    };
  }
}

/**
 * An API time as the API wrote it (whole seconds, "…Z"). client-node turns them into Dates;
 * this turns them back so the observation keeps the API's own form.
 */
export function apiTimeString(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  return new Date(value instanceof Date ? value : String(value)).toISOString().replace('.000Z', 'Z');
}
