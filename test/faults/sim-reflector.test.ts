// The simulated kubelet's pod watch (cluster/sim/reflector.ts) as client-go's Reflector keeps it:
// the backoff's waits and its 2 min reset, and what the kubelet receives while the API refuses,
// stalls, or the kubelet itself is stopped. Timers are vitest's fake ones: the waits are the subject.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiReachability, KubeletPause } from '../../cluster/sim/faults.ts';
import { PodWatchLink, ReflectorBackoff } from '../../cluster/sim/reflector.ts';

describe('the reflector backoff (wait.Backoff 0.8 s ×2, cap 30 s, jitter 1.0, reset after 2 min)', () => {
  it('doubles from 0.8 s to 30 s, each wait jittered up to twice its base', () => {
    const now = 0;
    const low = new ReflectorBackoff(
      () => now,
      () => 0,
    );
    expect(Array.from({ length: 9 }, () => low.step())).toEqual([
      800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000,
    ]);
    const high = new ReflectorBackoff(
      () => now,
      () => 0.999,
    );
    const waits = Array.from({ length: 7 }, () => high.step());
    expect(waits.map((w) => Math.round(w))).toEqual(
      [800, 1600, 3200, 6400, 12_800, 25_600, 30_000].map((d) => Math.round(d * 1.999)),
    );
  });

  it('starts again from 0.8 s only once 2 min have passed since its last reset', () => {
    let now = 0;
    const b = new ReflectorBackoff(
      () => now,
      () => 0,
    );
    b.step();
    b.step();
    b.step();
    now = 119_000;
    expect(b.step()).toBe(6400);
    now = 121_000;
    expect(b.step()).toBe(800);
    now = 200_000;
    expect(b.step()).toBe(1600);
  });
});

describe('what the kubelet receives over its pod watch', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function link() {
    const reach = new ApiReachability();
    const pause = new KubeletPause();
    const got: string[] = [];
    const backoff = new ReflectorBackoff(
      () => Date.now(),
      () => 0,
    );
    const l = new PodWatchLink<string>(reach, pause, (e) => got.push(e), backoff);
    return { reach, pause, got, link: l };
  }

  it('while the API refuses, nothing; after it listens again, everything missed in order at the next try of the backoff', () => {
    const { reach, got, link: l } = link();
    l.send('a');
    expect(got).toEqual(['a']);
    reach.refused();
    l.send('b');
    l.send('c');
    // Tries at 0.8, 2.4, 5.6 s (no jitter here): the API is back at 3 s, so the kubelet sees it at 5.6 s.
    vi.advanceTimersByTime(3_000);
    reach.listening();
    l.send('d');
    vi.advanceTimersByTime(2_500);
    expect(got).toEqual(['a']);
    vi.advanceTimersByTime(100);
    expect(got).toEqual(['a', 'b', 'c', 'd']);
    l.send('e');
    expect(got.at(-1)).toBe('e');
    l.stop();
  });

  it('a stalled API holds the watch until it is released; a stopped kubelet reads nothing until it runs', () => {
    const { reach, pause, got, link: l } = link();
    reach.stall();
    l.send('a');
    expect(got).toEqual([]);
    reach.released();
    expect(got).toEqual(['a']);
    pause.pause(5);
    l.send('b');
    expect(got).toEqual(['a']);
    vi.advanceTimersByTime(5_000);
    expect(got).toEqual(['a', 'b']);
    l.stop();
  });

  it('a backoff try that comes due while the kubelet is stopped is made when it runs again', () => {
    const { reach, pause, got, link: l } = link();
    reach.refused();
    l.send('a');
    reach.listening();
    pause.pause(10);
    vi.advanceTimersByTime(9_000);
    expect(got).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(got).toEqual(['a']);
    l.stop();
  });
});
