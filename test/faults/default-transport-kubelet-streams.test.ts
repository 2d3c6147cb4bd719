// The node's fault matrix (dev/node/faults.ts) on the simulated cluster, on the default transport
// (portforward), with the API healthy: the node's kubelet-paused-5s (the kubelet stopped 5 s inside the
// hook, graded as on the node), and the port-forward streams alone reset. (test/support/fault-pair.ts
// runs the pair.)
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { expectHonest, runPair, why } from '../support/fault-pair.ts';

describe.concurrent('the lab pair on the default transport while the kubelet is stopped', () => {
  // dev/node/faults.ts kubelet-paused-5s: SIGSTOP 2 s into terminating (the hook starts about then), SIGCONT 5 s later.
  it('paused 5 s inside the hook: the path held, so it is graded on the kubelet (matches, inconclusive with its cause, or differs naming its lateness), never a lost path or invalid; one try each', async () => {
    let resumedAt = Number.POSITIVE_INFINITY;
    const { tries, left, struck, missed, sim } = await runPair(
      'run-fk-paused',
      { fault: 'pause-kubelet', seconds: 5 },
      'during-hook',
      (s) =>
        s.kubeletPause.once('resumed', () => {
          resumedAt = performance.timeOrigin + performance.now();
        }),
    );
    expect(struck, missed).toBe(true);
    for (const [scenario, list] of tries) {
      expect(list.length, `${scenario}: ${why(list[0]!)}`).toBe(1);
      const o = list[0]!;
      const result = grade(o);
      // The node suite's rule for a kubelet fault (dishonest() in dev/node/faults.ts).
      const honest =
        result.verdict === 'matches-model' ||
        (result.verdict === 'inconclusive' && result.explanation.trim() !== '') ||
        (result.verdict === 'differs-from-model' && /the kubelet was late/.test(result.explanation));
      expect(honest, `${scenario}: ${result.verdict}: ${result.explanation} ${why(o)}`).toBe(true);
      expect(result.lostPath ?? null, why(o)).toBeNull();
      expect(
        result.checks.filter((c) => c.status === 'fail' && c.id.startsWith('evidence.')),
        why(o),
      ).toEqual([]);
      // As on the node: the watch and the forward held; nothing was cut by the remote side.
      expect(o.evidence.watchLifecycle.map((l) => l.event)).toEqual(['connected']);
      expect(
        o.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006),
        why(o),
      ).toBe(false);
    }
    // As on the node: the hook ended inside the pause, but its log line (the kubelet serves logs) and TERM came only once the kubelet ran.
    const short = tries.get('short-grace')![0]!;
    const truth = sim.truth(short.pod!.uid!)!;
    const hookEnd = short.evidence.logLines.find((l) => l.text.includes('"event":"hook-end"'));
    expect(truth.hookEndAt!, why(short)).toBeLessThan(resumedAt);
    expect(truth.termSentAt!).toBeGreaterThanOrEqual(resumedAt);
    expect(Date.parse(hookEnd!.receivedAt.wall), why(short)).toBeGreaterThanOrEqual(Math.floor(resumedAt));
    expect(left).toBe(0);
  }, 120_000);
});

describe.concurrent('the lab pair on the default transport while its port-forward streams alone are reset', () => {
  it.each(['during-hook', 'after-term'] as const)(
    'reset %s: the watch untouched, the lost try inconclusive, the retry matches',
    async (point) => {
      const { tries, left, struck, missed } = await runPair(`run-fr-${point}`, { fault: 'reset-port-forwards' }, point);
      expect(struck, missed).toBe(true);
      expectHonest(tries);
      const first = tries.get('short-grace')![0]!;
      // The API stayed up: the watch never dropped.
      expect(first.evidence.watchLifecycle.map((l) => l.event)).toEqual(['connected']);
      expect(left).toBe(0);
    },
    90_000,
  );
});
