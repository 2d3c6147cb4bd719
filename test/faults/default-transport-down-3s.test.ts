// The node's fault matrix (cluster/node/faults.ts) on the simulated cluster, on the default transport
// (portforward): the API server dies for 3 s at three points — right after the delete was answered, while
// the hook runs, after TERM. Every try matches the model or is inconclusive with its cause; never differs,
// never evidence invalid; the last try matches; nothing is left. (test/support/fault-pair.ts runs the pair.)
import { describe, expect, it } from 'vitest';
import { expectHonest, runPair, why } from '../support/fault-pair.ts';

describe.concurrent('the lab pair on the default transport while the API server dies', () => {
  it.each([
    ['3s', 'before-kubelet', 3], ['3s', 'during-hook', 3], ['3s', 'after-term', 3],
  ] as const)('down %s, %s: every try matches or is inconclusive with its cause; the last matches; no pod left', async (label, point, seconds) => {
    const { tries, left, struck, missed } = await runPair(`run-fd-${label}-${point}`.slice(0, 40), { fault: 'refuse-connections', seconds }, point);
    expect(struck, missed).toBe(true);
    expectHonest(tries);
    // The outage cut short-grace's forward while its request was in flight: lost, and tried again.
    const first = tries.get('short-grace')![0]!;
    expect(first.evidence.transport.some((e) => e.event === 'closed' && e.by === 'remote' && e.code === 1006), why(first)).toBe(true);
    expect(tries.get('short-grace')!.length, why(first)).toBe(2);
    expect(left).toBe(0);
  }, 150_000);
});
