// A verify run where nothing failed, judged by how narrowly: a pod that got TERM sooner after its endpoint left the
// EndpointSlice than kube-proxy may take to act on it won a race (on the real node: won quiet, lost under load).
import { describe, expect, it } from 'vitest';
import { raceWon } from '../../harness/verify/grade.ts';
import type { PodTimes } from '../../harness/verify/facts.ts';

const pod = (
  name: string,
  times: { deletion: number; notReady: number; term: number },
  preStop = 'none',
  sleep: number | null = null,
): PodTimes => ({
  name,
  uid: `uid-${name}`,
  old: true,
  created: 0,
  ready: 1,
  deletion: times.deletion,
  terminating: times.deletion,
  deletionApi: times.deletion,
  killing: times.term,
  term: times.term,
  termSource: 'lab log',
  exited: times.term + 0.2,
  exitCode: 0,
  killed: false,
  endpointNotReady: times.notReady,
  endpointGone: times.term + 1,
  gone: times.term + 2,
  preStop,
  preStopSleepSeconds: sleep,
  grace: 30,
});

describe('verify: a pass that won a race with the proxies', () => {
  it('names the margin between the endpoint leaving the slice and TERM, and a preStop sleep that covers the proxies', () => {
    // The v1.37.2 node, delete-pod, quiet: not ready 0.1 s after the deletion, TERM 0.7 s after it.
    const race = raceWon([pod('web-del-a', { deletion: 10, notReady: 10.1, term: 10.7 })]);
    expect(race?.advice).toMatch(
      /^no request failed, but by a narrow margin: TERM came 0\.6s after the endpoint left the EndpointSlice/,
    );
    expect(race?.advice).toMatch(/`preStop: sleep` of at least 3s/);
    expect(race?.reasoning).toBe('web-del-a got TERM 0.6s after its endpoint was marked not ready (preStop: none)');
  });

  it('gives the span over the pods that raced and leaves out one a hook held back', () => {
    const race = raceWon([
      pod('a', { deletion: 10, notReady: 10.0, term: 10.3 }),
      pod('b', { deletion: 20, notReady: 20.4, term: 21.5 }),
      pod('c', { deletion: 30, notReady: 30.1, term: 35.1 }, 'sleep 5s', 5),
    ]);
    expect(race?.advice).toMatch(/TERM came 0\.3s–1\.1s after/);
    expect(race?.reasoning).not.toMatch(/\bc got TERM/);
  });

  it('is silent where a preStop sleep kept every pod serving past the proxies', () => {
    expect(raceWon([pod('hooked', { deletion: 10, notReady: 10.1, term: 15.1 }, 'sleep 5s', 5)])).toBeNull();
  });
});
