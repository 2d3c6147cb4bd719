// The edge scenarios' two sides side by side (issue 42). Compared is what the edge model grades, outcome
// classes and never a sub-second time: its verdict, whether requests failed, each cause it expects or rules out
// (seen or not), and the answers the clients got for the failures it expects. The edge's lag and the old pods'
// TERM → exit are shown side by side and not compared (why: EDGE_NOT_COMPARED). Pure.
import { type OffsetStats, stats } from './compare.ts';
import type { EdgeRunSummary } from './edge-summary.ts';

/**
 * Why a figure is shown and not compared. The lag: the simulated edge applies a lone change after its watch's few
 * ms, the loaded node's Traefik after 0.3-2.7 s of its own processing (docs/edge.md); within a rollout both wait
 * out the 2 s throttle. The model grades no time, only whether a sleep outlasts the lag's bound. The exit: a
 * polite app leaves when the edge's pooled idle connections to it close, which the edge's pool (90 s idle) and
 * its last request on each decide: 1.7-25 s after TERM on the node within one run.
 */
export const EDGE_NOT_COMPARED = {
  lag: "the simulated edge applies a lone change within its watch's few ms where the loaded node's Traefik took 0.3-2.7 s (docs/edge.md); the model grades whether a sleep outlasts the lag's bound, not the lag",
  exit: "a polite app exits when the edge's pooled idle connections to it close, which the edge's last request on each decides (1.7-25 s after TERM within one node run)",
  possible:
    'the model allows either: whether a race is caught in a run is chance, and a run of either kind matches the model',
} as const;

type Exposure = 'expected' | 'possible' | 'none';

export interface EdgeSideResult {
  runs: number;
  incomplete: string[];
  verdict: string | null;
  /** Every run's verdict, by run: a run the model did not match is shown even where most runs decide. */
  verdicts: string[];
  /** Most runs had a request fail. */
  failed: boolean;
  failedCounts: number[];
  requests: number[];
  /** Per model cause: most runs saw it; and each run's count. */
  seen: Record<string, { seen: boolean; counts: number[] }>;
  /** Answers to the failures of expected causes, each a kind most runs had, with every run's count. */
  answers: Record<string, { most: boolean; counts: number[] }>;
  /** Answers to the other failures (possible causes), every run's count: shown only. */
  otherAnswers: Record<string, number[]>;
  lag: OffsetStats | null;
  termToEnded: OffsetStats | null;
  exitCodes: string;
  edgeRetried: number;
}

export interface EdgeComparison {
  scenario: string;
  sim: EdgeSideResult | null;
  node: EdgeSideResult | null;
  /** The model's exposure per cause (from the scenario: the same on both sides). */
  model: Record<string, Exposure>;
  disagreements: string[];
}

const majority = (flags: boolean[]) => flags.filter(Boolean).length * 2 > flags.length;

function mostCommon(values: string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

export function edgeSideResult(runs: EdgeRunSummary[]): EdgeSideResult {
  const complete = runs.filter((r) => r.complete);
  const used = complete.length ? complete : runs;
  const model = used[0]?.model ?? {};
  const seen: EdgeSideResult['seen'] = {};
  for (const cause of Object.keys(model)) {
    const counts = used.map((r) => r.seen[cause] ?? 0);
    seen[cause] = { seen: majority(counts.map((n) => n > 0)), counts };
  }
  const expected = Object.keys(model).filter((c) => model[c] === 'expected');
  const answersOf = (r: EdgeRunSummary, causes: (c: string) => boolean) => {
    const out: Record<string, number> = {};
    for (const [cause, kinds] of Object.entries(r.answers))
      if (causes(cause)) for (const [kind, n] of Object.entries(kinds)) out[kind] = (out[kind] ?? 0) + n;
    return out;
  };
  const tally = (causes: (c: string) => boolean) => {
    const perRun = used.map((r) => answersOf(r, causes));
    const kinds = [...new Set(perRun.flatMap((a) => Object.keys(a)))].sort();
    return Object.fromEntries(kinds.map((k) => [k, perRun.map((a) => a[k] ?? 0)]));
  };
  const answers = Object.fromEntries(
    Object.entries(tally((c) => expected.includes(c))).map(([k, counts]) => [
      k,
      { most: majority(counts.map((n) => n > 0)), counts },
    ]),
  );
  return {
    runs: runs.length,
    incomplete: runs.filter((r) => !r.complete).map((r) => `#${r.repetition}: ${r.incompleteReason ?? 'incomplete'}`),
    verdict: mostCommon(used.map((r) => r.verdict)),
    verdicts: used.map((r) => r.verdict),
    failed: majority(used.map((r) => r.failed > 0)),
    failedCounts: used.map((r) => r.failed),
    requests: used.map((r) => r.requests),
    seen,
    answers,
    otherAnswers: tally((c) => !expected.includes(c)),
    lag: stats(used.flatMap((r) => r.lagSeconds)),
    termToEnded: stats(used.flatMap((r) => r.termToEndedSeconds)),
    exitCodes: [...new Set(used.flatMap((r) => r.oldPodExitCodes.map((c) => String(c ?? '–'))))].sort().join(', '),
    edgeRetried: used.reduce((n, r) => n + r.edgeRetried, 0),
  };
}

/** The kinds of answer most runs of a side gave to the failures the model expects. */
export const usualAnswers = (s: EdgeSideResult) =>
  Object.entries(s.answers)
    .filter(([, a]) => a.most)
    .map(([k]) => k)
    .sort();

export function compareEdgeSides(sim: EdgeRunSummary[], node: EdgeRunSummary[]): EdgeComparison[] {
  const names = [...new Set([...sim, ...node].map((r) => r.scenario))];
  return names.map((scenario) => {
    const simRuns = sim.filter((r) => r.scenario === scenario);
    const nodeRuns = node.filter((r) => r.scenario === scenario);
    const s = simRuns.length ? edgeSideResult(simRuns) : null;
    const n = nodeRuns.length ? edgeSideResult(nodeRuns) : null;
    const model = (nodeRuns[0] ?? simRuns[0])?.model ?? {};
    const disagreements: string[] = [];
    if (!s || !n) disagreements.push(`only the ${s ? 'simulated' : 'real'} side ran it`);
    else {
      if (s.verdict !== n.verdict) disagreements.push(`the model's verdict: sim ${s.verdict}, node ${n.verdict}`);
      if (s.failed !== n.failed)
        disagreements.push(
          `requests failed: on ${s.failed ? 'the sim' : 'the node'} only (sim ${s.failedCounts.join('/')}, node ${n.failedCounts.join('/')})`,
        );
      for (const [cause, exposure] of Object.entries(model)) {
        if (exposure === 'possible') continue;
        const [a, b] = [s.seen[cause], n.seen[cause]];
        if (a && b && a.seen !== b.seen)
          disagreements.push(
            `${cause} (the model: ${exposure}): seen on ${a.seen ? 'the sim' : 'the node'} only (sim ${a.counts.join('/')}, node ${b.counts.join('/')})`,
          );
      }
      const [sa, na] = [usualAnswers(s), usualAnswers(n)];
      // A kind most runs of one side gave that no run of the other ever gave is a mechanism one side lacks; one
      // usual on one side and rarer on the other is the same mechanism at another rate (how many requests a
      // window catches), which the model does not grade. A side with no expected failure has no answers to
      // compare: the cause's own line says so.
      const onlySim = sa.filter((k) => !(k in n.answers));
      const onlyNode = na.filter((k) => !(k in s.answers));
      if (sa.length && na.length && (onlySim.length || onlyNode.length))
        disagreements.push(
          `answers to the expected failures: ${[
            ...(onlySim.length ? [`sim only ${onlySim.join(', ')}`] : []),
            ...(onlyNode.length ? [`node only ${onlyNode.join(', ')}`] : []),
          ].join('; ')}`,
        );
    }
    return { scenario, sim: s, node: n, model, disagreements };
  });
}
