// verify's explanation follows from the times it shows beside it. Recorded on the simulated cluster
// (`termlab verify deployment/web --sim --apply manifests/verify-example.yaml --path '/work?ms=200'`, then
// trimmed to the failed requests and a few around them): three old pods, each first seen terminating at
// 1.3 s (web-…-dhchn), 2.4 s (web-…-hqjsz) and 3.4 s (web-…-mh8kg) from the rollout-restart, no preStop.
// L232 connected at 1.40 s and was reset at 1.40 s: dhchn had begun terminating 0.07 s before. It used to be
// put on hqjsz, "connected 1.0s before the first sign of it", a second's tolerance letting a pod that began
// terminating after the request had ended take it; and the advice named a 2 s sleep without saying why.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseVerification } from '../../harness/verify/files.ts';
import { gradeVerification } from '../../harness/verify/grade.ts';
import type { VerificationObservation } from '../../harness/observation/verification.ts';

const FILE = join(import.meta.dirname, 'fixtures', 'rollout-no-prestop.verification.json');
const recorded = () => JSON.parse(readFileSync(FILE, 'utf8')) as VerificationObservation;
const grade = (o: VerificationObservation) => gradeVerification(parseVerification(o, FILE));

/** The recording with one request's times moved by `ms` (its sent, connected and ended alike). */
function shifted(id: string, ms: number): VerificationObservation {
  const o = recorded();
  const move = (t: { time: string; mono: number }) => ({
    time: new Date(Date.parse(t.time) + ms).toISOString(),
    mono: t.mono + ms,
  });
  for (const line of o.evidence.loadLog!.lines) {
    const r = JSON.parse(line.text);
    if (r.event !== 'request' || r.id !== id) continue;
    for (const k of ['sent', 'connectedAt', 'headersAt', 'ended']) if (r[k]) r[k] = move(r[k]);
    r.dueMono += ms;
    line.text = JSON.stringify(r);
  }
  return o;
}

describe("verify's causes follow from the times beside them", () => {
  it('puts each failed request on a pod first seen terminating before it ended, the one that began last before it', () => {
    const g = grade(recorded());
    const byId = Object.fromEntries(g.failures.map((f) => [f.id, f]));
    expect(byId.L232).toMatchObject({ cause: 1, pod: 'web-74f8f8bbbc-dhchn' });
    expect(byId.L232!.why).toMatch(/^reached a pod 0\.1s after web-74f8f8bbbc-dhchn began terminating/);
    // Every cause 1 to 3 on the pod table's own times: its pod's first sign came before the request ended.
    for (const f of g.failures.filter((x) => x.cause !== 4)) {
      const pod = g.pods.find((p) => p.name === f.pod)!;
      expect(pod.terminating!, `${f.id}: ${f.why}`).toBeLessThanOrEqual(f.ended + 0.05);
      expect(f.why).not.toMatch(/before the first sign/);
    }
  });

  it('a request that failed before any pod was seen terminating is not put on one: the evidence does not say', () => {
    // L232 half a second earlier: reset at 0.9 s, 0.4 s before dhchn's first sign (1.3 s).
    const g = grade(shifted('L232', -500));
    const f = g.failures.find((x) => x.id === 'L232')!;
    expect(f.cause).toBe(4);
    expect(f.why).toMatch(
      /^no pod was seen terminating by the time it failed at 0\.9s; web-74f8f8bbbc-dhchn was first seen terminating at 1\.3s, after it failed at 0\.9s: the evidence does not say it had begun earlier$/,
    );
  });

  it('a TERM that came after the request ended did not cut it: not cause 2 "across its TERM"', () => {
    // L280 half a second later (2.86 s to 2.87 s), with mh8kg's log cut short (it no longer names every request
    // it took): its TERM at 3.4 s came after L280 ended, so L280 was not in flight at it. hqjsz had begun
    // terminating at 2.35 s, before L280 reached it.
    const o = shifted('L280', 500);
    for (const log of o.evidence.podLogs) if (log.pod === 'web-74f8f8bbbc-mh8kg') log.ended = false;
    const f = grade(o).failures.find((x) => x.id === 'L280')!;
    expect(f).toMatchObject({ cause: 1, pod: 'web-74f8f8bbbc-hqjsz' });
    expect(f.why).toMatch(/^reached a pod 0\.5s after web-74f8f8bbbc-hqjsz began terminating/);
  });

  it("an earlier run's request of the same id, in a pod's log before this run's load began, does not say where this one went", () => {
    // A pod an earlier verify made served that run's requests, L1, L2, … as this run's are: seen on the sim,
    // "answered by" the pod that took the earlier L202, while the edge and the answer's header named another.
    const o = recorded();
    const hqjsz = o.evidence.podLogs.find((l) => l.pod === 'web-74f8f8bbbc-hqjsz')!;
    const listening = JSON.parse(hqjsz.lines[0]!.text);
    const earlier = new Date(Date.parse(listening.time) + 500).toISOString();
    hqjsz.lines.splice(1, 0, {
      ...hqjsz.lines[0]!,
      text: JSON.stringify({
        event: 'accepted',
        time: earlier,
        mono: listening.mono + 500,
        pid: listening.pid,
        podUid: listening.podUid,
        id: 'L232',
        ms: 200,
      }),
    });
    expect(grade(o).failures.find((x) => x.id === 'L232')).toMatchObject({ cause: 1, pod: 'web-74f8f8bbbc-dhchn' });
  });

  it('derives the preStop sleep from the figure it quotes', () => {
    const g = grade(recorded());
    const advice = g.advice.find((a) => /preStop: sleep` of at least/.test(a))!;
    const m = /of at least (\d+)s — endpoint removal reached the proxies up to (\d+\.\d)s after each deletion/.exec(
      advice,
    );
    expect(m, advice).not.toBeNull();
    const [sleep, quoted] = [Number(m![1]), Number(m![2])];
    expect(sleep).toBe(Math.ceil(quoted + 1));
    expect(advice).toContain(
      `${quoted.toFixed(1)}s + a 1s margin (one run does not see every proxy at its slowest), rounded up to a whole second, is ${sleep}s`,
    );
  });
});
