// verify's wait for the edge's late lines (harness/verify/edge-logs.ts): bounded by one dial timeout from now,
// whatever the load pod's clock says of its sends (a laptop's clock and the cluster's may be hours apart).
import { describe, expect, it } from 'vitest';
import { EDGE_DIAL_TIMEOUT_MS, EdgeLogs } from '../../harness/verify/edge-logs.ts';

describe("the wait for the edge's late lines", () => {
  it('ends one dial timeout from now even when the sends are dated an hour ahead', async () => {
    let t = 0;
    const looks: number[] = [];
    const now = () => {
      looks.push(t);
      t += 5_000;
      return looks.at(-1)!;
    };
    const failed = [{ id: 'L1', requestId: 'load-L1', sentMs: 3_600_000 }];
    const missing = await new EdgeLogs().awaitLines(failed, new AbortController().signal, now);
    expect(missing).toEqual(failed);
    expect(Math.max(...looks)).toBeLessThanOrEqual(EDGE_DIAL_TIMEOUT_MS + 5_000 * 2);
  });

  it('returns at once when nothing is missing', async () => {
    expect(await new EdgeLogs().awaitLines([], new AbortController().signal)).toEqual([]);
  });
});
