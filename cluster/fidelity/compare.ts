// The two sides side by side: per scenario, the categorical results (the value most repetitions
// gave) and the median and spread of each offset. Pure.
import { REAL_NODE_TIMING } from '../sim/pleg.ts';
import { OFFSETS, type OffsetName, type RunSummary, type SideFile } from './summary.ts';

/** Two medians further apart than this disagree (seconds). */
export const MEDIAN_TOLERANCE_SECONDS = 0.3;

/**
 * Offsets that a kubelet ticker's phase decides, uniform over its period on a real node: the sync
 * ticker finds an exceeded deadline, then the pod worker waits for the next PLEG relist before it
 * kills. Medians of three draws from one period differ by more than 300 ms about a third of the
 * time on the same kubelet, so every run of both sides must instead fall inside the period the
 * mechanism allows (plus the same tolerance).
 */
export const TICKER_WINDOWS: Partial<Record<OffsetName, { from: number; to: number; why: string }>> = {
  verdict: { from: 0, to: REAL_NODE_TIMING.syncTickMs / 1000 + MEDIAN_TOLERANCE_SECONDS, why: 'the sync ticker' },
  // TERM is the container's clock and the verdict the watch's arrival: a relist just after the verdict's sync can put TERM first.
  verdictToTerm: { from: -MEDIAN_TOLERANCE_SECONDS, to: (REAL_NODE_TIMING.relistPeriodMs + REAL_NODE_TIMING.relistDurationMs) / 1000 + MEDIAN_TOLERANCE_SECONDS, why: 'a PLEG relist' },
};

export interface OffsetStats { median: number; min: number; max: number; n: number }

export interface SideResult {
  runs: number;
  incomplete: string[];
  outcome: string | null;
  exitCode: number | null;
  reason: string | null;
  phase: string | null;
  eventReasons: string;
  offsets: Record<OffsetName, OffsetStats | null>;
  hookLaunchLagMs: number[];
}

export interface ScenarioComparison {
  scenario: string;
  sim: SideResult | null;
  node: SideResult | null;
  disagreements: string[];
}

function mostCommon<T>(values: T[]): T | null {
  const counts = new Map<string, { value: T; n: number }>();
  for (const value of values) {
    const key = JSON.stringify(value);
    counts.set(key, { value, n: (counts.get(key)?.n ?? 0) + 1 });
  }
  return [...counts.values()].sort((a, b) => b.n - a.n)[0]?.value ?? null;
}

export function stats(values: number[]): OffsetStats | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length };
}

export function sideResult(runs: RunSummary[]): SideResult {
  const complete = runs.filter((r) => r.complete);
  const used = complete.length ? complete : runs;
  const offsets = Object.fromEntries(OFFSETS.map((name) => [name, stats(used.map((r) => r.offsets[name] ?? null).filter((v): v is number => v !== null))])) as SideResult['offsets'];
  return {
    runs: runs.length,
    incomplete: runs.filter((r) => !r.complete).map((r) => `#${r.repetition}: ${r.incompleteReason ?? 'incomplete'}`),
    outcome: mostCommon(used.map((r) => r.outcome)),
    exitCode: mostCommon(used.map((r) => r.exitCode)),
    reason: mostCommon(used.map((r) => r.reason)),
    phase: mostCommon(used.map((r) => r.phase)),
    eventReasons: mostCommon(used.map((r) => r.eventReasons.join(', '))) ?? '',
    offsets,
    hookLaunchLagMs: used.map((r) => r.hookLaunchLagMs).filter((v): v is number => v !== null),
  };
}

export function compareSides(sim: SideFile, node: SideFile): ScenarioComparison[] {
  const names = [...new Set([...sim.runs, ...node.runs].map((r) => r.scenario))];
  return names.map((scenario) => {
    const simRuns = sim.runs.filter((r) => r.scenario === scenario);
    const nodeRuns = node.runs.filter((r) => r.scenario === scenario);
    const s = simRuns.length ? sideResult(simRuns) : null;
    const n = nodeRuns.length ? sideResult(nodeRuns) : null;
    const disagreements: string[] = [];
    if (!s || !n) disagreements.push(`only the ${s ? 'simulated' : 'real'} side ran it`);
    else {
      for (const field of ['outcome', 'exitCode', 'reason', 'eventReasons'] as const) {
        if (s[field] !== n[field]) disagreements.push(`${field}: sim ${JSON.stringify(s[field])}, node ${JSON.stringify(n[field])}`);
      }
      for (const name of OFFSETS) {
        const [a, b] = [s.offsets[name], n.offsets[name]];
        const window = TICKER_WINDOWS[name];
        if ((a === null) !== (b === null)) disagreements.push(`${name}: seen only on the ${a ? 'simulated' : 'real'} side`);
        else if (a && b && window) {
          for (const [label, v] of [['sim', a], ['node', b]] as const) {
            if (v.min < window.from || v.max > window.to) disagreements.push(`${name}: ${label} ${v.min.toFixed(2)}s–${v.max.toFixed(2)}s, outside ${window.why}'s ${window.from}–${window.to.toFixed(2)}s`);
          }
        } else if (a && b && Math.abs(a.median - b.median) > MEDIAN_TOLERANCE_SECONDS) {
          disagreements.push(`${name}: median ${a.median.toFixed(2)}s on the sim, ${b.median.toFixed(2)}s on the node`);
        }
      }
    }
    return { scenario, sim: s, node: n, disagreements };
  });
}
