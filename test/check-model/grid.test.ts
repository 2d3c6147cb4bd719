// The model against the simulator on a small grid (the full one is `npm run check:model`): every
// mode with no hook, an exec hook and an httpGet hook, work ending before and after the kill.
import { describe, expect, it } from 'vitest';
import { FULL_GRID, gridScenarios, SMALL_GRID } from '../../dev/check-model/grid.ts';
import { checkModel, closingTable } from '../../dev/check-model/run.ts';
import { ScenarioFileSchema } from '../../harness/scenario/schema.ts';

describe('the check:model grid', () => {
  it('is every combination of its axes, each a valid scenario with a name of its own', () => {
    const full = gridScenarios(FULL_GRID);
    expect(full).toHaveLength(3 * 10 * 2 * 2 * 2);
    expect(ScenarioFileSchema.safeParse({ scenarios: full }).success).toBe(true);
    expect(gridScenarios(SMALL_GRID)).toHaveLength(3 * 3 * 2);
  });

  it('closes with a table of how many combinations ran, how many were too close to call, and how long it took', () => {
    const table = closingTable({
      combinations: 240,
      agreements: 238,
      disagreements: [],
      missing: [],
      inconclusive: [
        { scenario: 'a', why: 'x' },
        { scenario: 'b', why: 'y' },
      ],
      seconds: 213.84,
      runStderr: '',
      runExitCode: 0,
    });
    expect(table.split('\n')[0]).toBe('| combinations | agreements | disagreements | too close to call | seconds |');
    expect(table).toContain('| 240 | 238 | 0 | 2 (0.8 %) | 213.8 |');
  });

  // One `termlab run --sim` of 18 scenarios at once; its length is the longest scenario's.
  it('the simulator and the model agree on every combination of the small grid', { timeout: 300_000 }, async () => {
    const r = await checkModel(SMALL_GRID, { parallel: 18 });
    expect(r.missing, r.runStderr).toEqual([]);
    expect(r.disagreements).toEqual([]);
    expect(r.agreements + r.inconclusive.length).toBe(r.combinations);
  });
});
