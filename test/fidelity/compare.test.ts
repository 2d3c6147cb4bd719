// The fidelity comparison: it must fail when the sides disagree, and pass when they agree.
import { describe, expect, it } from 'vitest';
import {
  compareMatrixWide,
  compareSides,
  MEDIAN_TOLERANCE_SECONDS,
  TICKER_WINDOWS,
} from '../../dev/fidelity/compare.ts';
import type { RunSummary, SideFile } from '../../dev/fidelity/summary.ts';

function run(over: Partial<RunSummary> & { term?: number }, repetition = 1): RunSummary {
  const { term = 1.8, ...rest } = over;
  return {
    scenario: 'no-prestop',
    repetition,
    complete: true,
    incompleteReason: null,
    outcome: 'completed',
    exitCode: 0,
    reason: 'Completed',
    phase: 'Succeeded',
    eventReasons: ['Created', 'Killing', 'Pulled', 'Scheduled', 'Started'],
    offsets: { hookStart: null, term, ended: 9.2, deleted: 9.5 },
    hookLaunchLagMs: null,
    ...rest,
  };
}
const side = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
  side: name,
  cluster: name,
  recordedAt: '2026-01-01T00:00:00Z',
  runs,
});

describe('fidelity comparison', () => {
  it('agrees when outcomes match and medians are within the tolerance', () => {
    const [c] = compareSides(
      side('sim', [run({ term: 1.7 }, 1), run({ term: 1.9 }, 2), run({ term: 1.6 }, 3)]),
      side('node', [run({ term: 1.8 }, 1), run({ term: 1.85 }, 2), run({ term: 2.2 }, 3)]),
    );
    expect(c!.disagreements).toEqual([]);
    expect(c!.sim!.offsets.term).toEqual({ median: 1.7, min: 1.6, max: 1.9, n: 3 });
  });

  it('disagrees on exit code, reason and event reasons', () => {
    const [c] = compareSides(
      side('sim', [run({})]),
      side('node', [run({ exitCode: 137, reason: 'OOMKilled', eventReasons: ['Killing', 'Unhealthy'] })]),
    );
    expect(c!.disagreements.map((d) => d.split(':')[0])).toEqual(['exitCode', 'reason', 'eventReasonsBesidesProber']);
  });

  it("compares the readiness prober's Unhealthy only where a drain held the port closed for a probe period on every run", () => {
    const reasons = ['Created', 'Killing', 'Pulled', 'Scheduled', 'Started'];
    const withProber = (portClosedSeconds: number | null, repetition: number) =>
      run({ eventReasons: [...reasons, 'Unhealthy'].sort(), portClosedSeconds }, repetition);
    const without = (portClosedSeconds: number | null, repetition: number) =>
      run({ eventReasons: reasons, portClosedSeconds }, repetition);
    // An exit that the status showed 0.2 s later: a probe tick may or may not fall in between.
    const [race] = compareSides(
      side('sim', [withProber(0.2, 1), withProber(0.2, 2), withProber(0.2, 3)]),
      side('node', [without(0.3, 1), without(0.25, 2), withProber(0.3, 3)]),
    );
    expect(race!.proberCompared).toBe(false);
    expect(race!.disagreements).toEqual([]);
    // A 3 s drain: every probe in it fails, so a side without Unhealthy disagrees.
    const [drain] = compareSides(
      side('sim', [withProber(3.2, 1), withProber(3.3, 2), withProber(3.2, 3)]),
      side('node', [without(3.3, 1), without(3.4, 2), withProber(3.3, 3)]),
    );
    expect(drain!.proberCompared).toBe(true);
    expect(drain!.disagreements).toEqual([expect.stringMatching(/^eventReasons: sim/)]);
    // Other reasons are compared either way.
    const [other] = compareSides(
      side('sim', [withProber(0.2, 1)]),
      side('node', [run({ eventReasons: ['Killing'], portClosedSeconds: 0.2 })]),
    );
    expect(other!.disagreements).toEqual([expect.stringMatching(/^eventReasonsBesidesProber: /)]);
  });

  it('disagrees when a median is off by more than the tolerance, or an offset is seen on one side only', () => {
    const offBy = MEDIAN_TOLERANCE_SECONDS + 0.01;
    const [c] = compareSides(
      side('sim', [run({ term: 0.12 })]),
      side('node', [
        run({ term: 0.12 + offBy, offsets: { hookStart: 1.5, term: 0.12 + offBy, ended: 9.2, deleted: 9.5 } }),
      ]),
    );
    expect(c!.disagreements).toEqual([
      'hookStart: seen only on the real side',
      expect.stringMatching(/^term: median 0\.12s on the sim/),
    ]);
  });

  it('judges a ticker-phased offset by its window, not by medians that differ by chance', () => {
    const deadline = (verdict: number, verdictToTerm: number, repetition: number) =>
      run(
        {
          scenario: 'deadline-runs-out',
          offsets: {
            hookStart: null,
            term: null,
            ended: null,
            deleted: 0.05,
            verdict,
            verdictToTerm,
            termToEnded: 2.15,
          },
        },
        repetition,
      );
    const node = side('node', [deadline(0.38, 0.29, 1), deadline(0.38, 0.55, 2), deadline(0.39, 0.82, 3)]);
    // Medians 0.5 s apart, every run inside its ticker's period: they agree.
    const [agree] = compareSides(
      side('sim', [deadline(0.9, 0.15, 1), deadline(0.9, 0.3, 2), deadline(0.91, 0.43, 3)]),
      node,
    );
    expect(agree!.disagreements).toEqual([]);
    // A deadline measured from an untruncated start time lands a whole second late on some runs.
    const late = TICKER_WINDOWS.verdict!.to + 0.5;
    const [c] = compareSides(
      side('sim', [deadline(0.9, 0.15, 1), deadline(late, 0.3, 2), deadline(0.91, 0.43, 3)]),
      node,
    );
    expect(c!.disagreements).toEqual([expect.stringMatching(/^verdict: sim 0\.90s–.*outside the sync ticker's/)]);
  });

  it('from 1.36 judges the kubelet reaction by its relist window, and a cut container from the reaction', () => {
    const v137 = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
      ...side(name, runs),
      cluster: name === 'sim' ? 'v1.37.2-termlab-sim' : 'v1.37.2',
    });
    // A cut container (grace 3 s): the reaction anywhere in the relists, its end 3.2 s after it.
    const cut = (reaction: number, toEnded: number, repetition: number) =>
      run(
        {
          outcome: 'cut',
          exitCode: 137,
          reason: 'Error',
          term: reaction,
          offsets: {
            hookStart: null,
            term: reaction,
            ended: reaction + toEnded,
            deleted: reaction + toEnded + 0.8,
            reaction,
            reactionToTerm: null,
            reactionToEnded: toEnded,
            endedToDeleted: 0.8,
          },
        },
        repetition,
      );
    const node = v137('node', [cut(0.05, 3.2, 1), cut(0.08, 3.25, 2), cut(0.9, 3.3, 3)]);
    // Reaction medians 0.8 s apart, delete→ended likewise: inside the window, and equal from the reaction.
    const [agree] = compareSides(v137('sim', [cut(0.7, 3.2, 1), cut(0.85, 3.2, 2), cut(0.95, 3.22, 3)]), node);
    expect(agree!.rule).toBe('reaction');
    expect(agree!.disagreements).toEqual([]);
    // A reaction past two relists, and a kill half a second late after it, are both caught.
    const late = TICKER_WINDOWS.reaction!.to + 0.2;
    const [c] = compareSides(v137('sim', [cut(0.7, 3.7, 1), cut(late, 3.75, 2), cut(0.95, 3.8, 3)]), node);
    expect(c!.disagreements).toEqual([
      expect.stringMatching(/^reaction: sim 0\.70s–.*outside one or two PLEG relists'/),
      expect.stringMatching(/^reactionToEnded: median 3\.75s on the sim, 3\.25s/),
    ]);
  });

  it("compares the pod's end over the whole matrix too: a side that always ends at the window's far edge disagrees", () => {
    const v137 = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
      ...side(name, runs),
      cluster: name === 'sim' ? 'v1.37.2-termlab-sim' : 'v1.37.2',
    });
    const at = (scenario: string, toLogEnd: number, repetition: number) =>
      run(
        {
          scenario,
          offsets: {
            hookStart: null,
            term: 0.2,
            ended: 9.2,
            deleted: 10,
            reaction: 0.2,
            reactionToTerm: null,
            reactionToEnded: null,
            endedToDeleted: 0.8,
            endedToLogEnd: toLogEnd,
            releasedToDeleted: 0,
          },
        },
        repetition,
      );
    const scenarios = ['a', 'b', 'c', 'd', 'e'];
    // The node's removal anywhere in a relist; a simulator that only ever ended the follow at the reader's look.
    const node = v137(
      'node',
      scenarios.flatMap((s, i) => [at(s, 0.1 + i * 0.05, 1), at(s, 0.3, 2), at(s, 0.9 - i * 0.1, 3)]),
    );
    const sim = v137(
      'sim',
      scenarios.flatMap((s) => [at(s, 0.95, 1), at(s, 1.0, 2), at(s, 0.9, 3)]),
    );
    expect(compareSides(sim, node).every((c) => c.disagreements.length === 0)).toBe(true);
    const [logEnd, released] = compareMatrixWide(sim, node);
    expect(logEnd).toMatchObject({
      offset: 'endedToLogEnd',
      disagrees: true,
      sim: { median: 0.95, n: 15 },
      node: { median: 0.3, n: 15 },
    });
    expect(released).toMatchObject({ offset: 'releasedToDeleted', disagrees: false });
    // Agreeing sides agree over the matrix as well.
    expect(compareMatrixWide(node, node).some((m) => m.disagrees)).toBe(false);
  });

  it('judges a sidecar by its kind, exit and TERM: a regular one from the reaction, a native one after the work the app completed', () => {
    const v137 = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
      ...side(name, runs),
      cluster: name === 'sim' ? 'v1.37.2-termlab-sim' : 'v1.37.2',
    });
    const withProxy = (native: boolean, reaction: number, proxyTerm: number, repetition: number, exitCode = 17) =>
      run(
        {
          outcome: native ? 'completed' : 'cut',
          workCompleted: native,
          sidecar: { native, exitCode, reason: 'Error' },
          offsets: {
            hookStart: null,
            term: reaction,
            ended: 9.3,
            deleted: 10.1,
            reaction,
            reactionToTerm: null,
            reactionToEnded: native ? null : 0.5,
            endedToDeleted: 0.8,
            endedToLogEnd: 0.5,
            releasedToDeleted: 0,
            sidecarTerm: proxyTerm,
            reactionToSidecarTerm: proxyTerm - reaction,
            sidecarTermToEnded: 0.3,
          },
        },
        repetition,
      );
    // Regular: TERM with the app's, wherever the reaction fell.
    const [regular] = compareSides(
      v137('sim', [withProxy(false, 0.8, 0.9, 1)]),
      v137('node', [withProxy(false, 0.1, 0.1, 1)]),
    );
    expect(regular!.compared).toEqual([
      'reaction',
      'reactionToTerm',
      'reactionToEnded',
      'reactionToSidecarTerm',
      'sidecarTermToEnded',
      'endedToLogEnd',
      'releasedToDeleted',
    ]);
    expect(regular!.disagreements).toEqual([]);
    // Native, after an app that completed its work: from the delete, so a reaction-relative difference is no verdict.
    const [native] = compareSides(
      v137('sim', [withProxy(true, 0.8, 9.1, 1)]),
      v137('node', [withProxy(true, 0.1, 9.2, 1)]),
    );
    expect(native!.compared).toContain('sidecarTerm');
    expect(native!.disagreements).toEqual([]);
    // A proxy TERM half a second late, or another exit code, disagrees.
    const [late] = compareSides(
      v137('sim', [withProxy(true, 0.1, 9.7, 1, 0)]),
      v137('node', [withProxy(true, 0.1, 9.2, 1)]),
    );
    expect(late!.disagreements).toEqual([
      'sidecar: sim "native / 0 / Error", node "native / 17 / Error"',
      expect.stringMatching(/^sidecarTerm: median 9\.70s on the sim, 9\.20s/),
    ]);
  });

  it("from 1.35 judges the pod's end by the kubelet's parts, not by the harness's release of its finalizer", () => {
    const v137 = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
      ...side(name, runs),
      cluster: name === 'sim' ? 'v1.37.2-termlab-sim' : 'v1.37.2',
    });
    // The container's end → its log's end (its removal), the harness's release → DELETED; DELETED itself after the
    // harness's round trips in between (0.45 s against 0.84 s, as no-prestop on 2026-12-02).
    const ended = (toLogEnd: number | null, releasedToDeleted: number, endedToDeleted: number, repetition: number) =>
      run(
        {
          offsets: {
            hookStart: null,
            term: 0.2,
            ended: 9.2,
            deleted: 9.2 + endedToDeleted,
            reaction: 0.2,
            reactionToTerm: null,
            reactionToEnded: null,
            endedToDeleted,
            endedToLogEnd: toLogEnd,
            releasedToDeleted,
          },
        },
        repetition,
      );
    const node = v137('node', [ended(0.42, 0.01, 0.84, 1), ended(0.5, 0.02, 0.9, 2), ended(0.61, 0.0, 0.8, 3)]);
    const [agree] = compareSides(
      v137('sim', [ended(0.4, 0.01, 0.45, 1), ended(0.45, 0.0, 0.45, 2), ended(0.5, 0.01, 0.5, 3)]),
      node,
    );
    expect(agree!.compared).toEqual(['reaction', 'reactionToTerm', 'ended', 'endedToLogEnd', 'releasedToDeleted']);
    expect(agree!.disagreements).toEqual([]);
    // Each is decided by a relist's phase (or the log reader's look), so judged by its window: a removal past a
    // relist after the end, or a kubelet's own delete past the relist after it, is caught.
    const [late] = compareSides(
      v137('sim', [ended(0.4, 0.5, 1.9, 1), ended(1.45, 0.6, 2.0, 2), ended(0.5, 1.5, 2.0, 3)]),
      node,
    );
    expect(late!.disagreements).toEqual([
      expect.stringMatching(/^endedToLogEnd: sim 0\.40s–1\.45s, outside a PLEG relist or the log reader's look's/),
      expect.stringMatching(/^releasedToDeleted: sim 0\.50s–1\.50s, outside a PLEG relist's/),
    ]);
    // A side whose follow never ended by itself (cut, or made whole by a read) has no removal to compare: it disagrees.
    const [one] = compareSides(v137('sim', [ended(null, 0.01, 0.45, 1)]), node);
    expect(one!.disagreements).toEqual(['endedToLogEnd: seen only on the real side']);
    // A record from before the log's end was kept is judged by DELETED, as it was.
    const old = (endedToDeleted: number, repetition: number) =>
      run(
        {
          offsets: {
            hookStart: null,
            term: 0.2,
            ended: 9.2,
            deleted: 9.2 + endedToDeleted,
            reaction: 0.2,
            reactionToTerm: null,
            reactionToEnded: null,
            endedToDeleted,
          },
        },
        repetition,
      );
    const [before] = compareSides(v137('sim', [old(0.45, 1)]), v137('node', [old(0.84, 1)]));
    expect(before!.compared).toContain('endedToDeleted');
    expect(before!.disagreements).toEqual([expect.stringMatching(/^endedToDeleted: median 0\.45s on the sim, 0\.84s/)]);
  });

  it("disagrees on a retry scenario's attempts or effects, each side's most common", () => {
    const retries = (effects: string, attempts = 'deleted cut → standby completed') => ({ attempts, effects });
    const [same] = compareSides(
      side('sim', [run({ retries: retries('2 applied, 0 already applied') })]),
      side('node', [run({ retries: retries('2 applied, 0 already applied') })]),
    );
    expect(same!.disagreements).toEqual([]);
    const [effects] = compareSides(
      side(
        'sim',
        [1, 2, 3].map((n) => run({ retries: retries('1 applied, 1 already applied') }, n)),
      ),
      side('node', [
        run({ retries: retries('2 applied, 0 already applied') }, 1),
        run({ retries: retries('2 applied, 0 already applied') }, 2),
        run({ retries: retries('1 applied, 1 already applied') }, 3),
      ]),
    );
    expect(effects!.disagreements).toEqual([
      expect.stringMatching(
        /^retries: sim "deleted cut → standby completed; 1 applied, 1 already applied", node ".*2 applied/,
      ),
    ]);
    const [attempts] = compareSides(
      side('sim', [run({ retries: retries('1 applied, 0 already applied', 'deleted completed') })]),
      side('node', [run({ retries: retries('1 applied, 0 already applied') })]),
    );
    expect(attempts!.disagreements).toHaveLength(1);
  });

  it("judges an end by the container's death where both sides date it, and the runtime's teardown after it over the matrix", () => {
    const v137 = (name: 'sim' | 'node', runs: RunSummary[]): SideFile => ({
      ...side(name, runs),
      cluster: name === 'sim' ? 'v1.37.2-termlab-sim' : 'v1.37.2',
    });
    // Seen ended 0.34 s after the exit on the sim every time; on the node 0.16, 0.74, 0.79 s (exec-hook-fails, 2026-12-02 19:12).
    const ended = (died: number | null, teardown: number, repetition: number) =>
      run(
        {
          offsets: {
            hookStart: null,
            term: 0.5,
            ended: (died ?? 4.0) + teardown,
            deleted: 5,
            reaction: 0.5,
            reactionToTerm: null,
            reactionToEnded: null,
            endedToLogEnd: 0.3,
            releasedToDeleted: 0,
            died,
            diedToEnded: died === null ? null : teardown,
          },
        },
        repetition,
      );
    const sim = v137('sim', [ended(4.0, 0.34, 1), ended(4.0, 0.34, 2), ended(4.05, 0.34, 3)]);
    const node = v137('node', [ended(4.0, 0.16, 1), ended(4.0, 0.74, 2), ended(3.98, 0.79, 3)]);
    const [byDeath] = compareSides(sim, node);
    expect(byDeath!.compared).toEqual(['reaction', 'reactionToTerm', 'died', 'endedToLogEnd', 'releasedToDeleted']);
    expect(byDeath!.disagreements).toEqual([]);
    // The same runs judged by the end seen (a side that cannot date a death) disagree on the node's teardown.
    const undated = v137(
      'node',
      node.runs.map((r) => ({ ...r, offsets: { ...r.offsets, died: null, diedToEnded: null } })),
    );
    const [bySighting] = compareSides(sim, undated);
    expect(bySighting!.compared).toContain('ended');
    expect(bySighting!.disagreements).toEqual([
      expect.stringMatching(/^ended: median 4\.34s on the sim, 4\.74s on the node/),
    ]);
    // A death half a second late is caught.
    const [late] = compareSides(v137('sim', [ended(4.5, 0.34, 1)]), v137('node', [ended(4.0, 0.3, 1)]));
    expect(late!.disagreements).toEqual([expect.stringMatching(/^died: median 4\.50s on the sim, 4\.00s/)]);
    // The teardown itself, pooled over the matrix (here with four other scenarios' runs: a median of 0.40 s, as over the
    // node's 48 that evening): a simulator that reports ends a second late disagrees there.
    const others = [0.2, 0.35, 0.4, 0.42].map((t, i) => ({ ...ended(9, t, i + 1), scenario: `other-${i}` }));
    const matrix = v137('node', [...node.runs, ...others]);
    const teardown = (file: SideFile) => compareMatrixWide(file, matrix).find((m) => m.offset === 'diedToEnded')!;
    expect(teardown(sim).node!.median).toBe(0.4);
    expect(teardown(sim).disagrees).toBe(false);
    expect(teardown(v137('sim', [ended(4.0, 1.34, 1), ended(4.0, 1.34, 2)])).disagrees).toBe(true);
  });
});
