// The grid `npm run check:model` runs on the simulated cluster: every combination of the server's
// mode, the hook's kind and length, the grace, the work's length and the delete's delay, each
// graded by the harness's model. The simulator and the model are written apart (ARCHITECTURE.md);
// this is where they must meet outside the recorded scenarios.
import type { PreStop, Scenario } from '../../harness/scenario/schema.ts';
import type { GradeResult } from '../../harness/grade/types.ts';

export interface GridAxes {
  modes: Scenario['mode'][];
  /** Hook lengths in seconds, for each kind that has one; `none` is always in. */
  hookKinds: ('exec' | 'sleep' | 'httpGet')[];
  hookSeconds: number[];
  graceSeconds: number[];
  workMs: number[];
  deleteDelayMs: number[];
}

export const FULL_GRID: GridAxes = {
  modes: ['graceful', 'immediate', 'ignore-term'],
  hookKinds: ['exec', 'sleep', 'httpGet'],
  hookSeconds: [1, 4, 9],
  graceSeconds: [3, 8],
  workMs: [2000, 7000],
  deleteDelayMs: [500, 1500],
};

/** The one in npm test: every mode and hook kind once, both sides of a kill. */
export const SMALL_GRID: GridAxes = {
  modes: ['graceful', 'immediate', 'ignore-term'],
  hookKinds: ['exec', 'httpGet'],
  hookSeconds: [2],
  graceSeconds: [3],
  workMs: [1500, 12000],
  deleteDelayMs: [1000],
};

const MODE_TAG: Record<Scenario['mode'], string> = { graceful: 'gr', immediate: 'im', 'ignore-term': 'it' };

function hooks(axes: GridAxes): { tag: string; preStop: PreStop }[] {
  const out: { tag: string; preStop: PreStop }[] = [{ tag: 'none', preStop: { kind: 'none' } }];
  for (const kind of axes.hookKinds) {
    for (const s of axes.hookSeconds) {
      if (kind === 'exec') out.push({ tag: `exec${s}`, preStop: { kind: 'exec-sleep', seconds: s } });
      if (kind === 'sleep') out.push({ tag: `sleep${s}`, preStop: { kind: 'sleep-action', seconds: s } });
      if (kind === 'httpGet') out.push({ tag: `http${s}`, preStop: { kind: 'httpGet', ms: s * 1000 } });
    }
  }
  return out;
}

/** Every combination of the axes as a scenario; its name says its place in the grid. */
export function gridScenarios(axes: GridAxes): Scenario[] {
  const scenarios: Scenario[] = [];
  for (const mode of axes.modes)
    for (const hook of hooks(axes))
      for (const grace of axes.graceSeconds) {
        for (const workMs of axes.workMs)
          for (const deleteDelayMs of axes.deleteDelayMs) {
            if (deleteDelayMs >= workMs) continue;
            scenarios.push({
              name: `${MODE_TAG[mode]}-${hook.tag}-g${grace}-w${workMs}-d${deleteDelayMs}`,
              mode,
              preStop: hook.preStop,
              terminationGracePeriodSeconds: grace,
              workMs,
              deleteDelayMs,
            });
          }
      }
  return scenarios;
}

export interface GridSummary {
  combinations: number;
  agreements: number;
  /** The simulator did something the model says it should not: each with its scenario and why. */
  disagreements: { scenario: string; verdict: string; why: string }[];
  inconclusive: { scenario: string; why: string }[];
  /** Scenarios with no graded observation (the run failed before it recorded one). */
  missing: string[];
}

export function summarize(scenarios: Scenario[], results: GradeResult[]): GridSummary {
  const byName = new Map(results.map((r) => [r.scenario, r]));
  const summary: GridSummary = {
    combinations: scenarios.length,
    agreements: 0,
    disagreements: [],
    inconclusive: [],
    missing: [],
  };
  for (const s of scenarios) {
    const r = byName.get(s.name);
    if (!r) summary.missing.push(s.name);
    else if (r.verdict === 'matches-model') summary.agreements++;
    else if (r.verdict === 'inconclusive') summary.inconclusive.push({ scenario: s.name, why: r.explanation });
    else summary.disagreements.push({ scenario: s.name, verdict: r.verdict, why: r.explanation });
  }
  return summary;
}
