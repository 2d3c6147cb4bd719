// The API's time form: whole seconds, like a real API server, so nothing downstream leans on sub-second API times.
import { performance } from 'node:perf_hooks';

export function apiTime(ms: number = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Wall ms from the sim's monotonic clock: the one clock every ground-truth record uses. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** RFC 3339 with nanoseconds, as the kubelet prefixes log lines with `timestamps=true`. */
export function logTimestamp(ms: number): string {
  const whole = Math.floor(ms);
  const nanos = String(Math.round((ms - whole) * 1e6)).padStart(6, '0');
  return new Date(whole).toISOString().replace(/Z$/, `${nanos}Z`);
}

/**
 * Resolves once at least `ms` have passed on the monotonic clock. Node's timers run on a coarser
 * loop clock and can fire a fraction of a millisecond early, which would flip the kubelet's
 * whole-second truncation; Go's timers never fire early.
 */
export function sleepAtLeast(ms: number, onTimer: (timer: NodeJS.Timeout) => void = () => {}): Promise<void> {
  const until = performance.now() + ms;
  return new Promise((resolve) => {
    const tick = () => {
      const left = until - performance.now();
      if (left <= 0) resolve();
      else onTimer(setTimeout(tick, Math.ceil(left)));
    };
    tick();
  });
}
