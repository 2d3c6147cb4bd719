// Scenario files are strict: a stray or misspelt field is an error that names the scenario, the line
// and the field it probably meant, never a setting silently ignored.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarios } from '../../harness/scenario/load.ts';

const GOOD = [
  '  - name: first',
  '    mode: graceful',
  '    preStop: { kind: none }',
  '    terminationGracePeriodSeconds: 5',
  '    workMs: 3000',
  '    deleteDelayMs: 1000',
];

function file(second: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'termlab-scn-')), 'scenarios.yaml');
  writeFileSync(path, ['scenarios:', ...GOOD, ...second].join('\n') + '\n');
  return path;
}
const second = (replace: [string, string][]) =>
  GOOD.map((l) => replace.reduce((line, [a, b]) => line.replace(a, b), l)).map((l) =>
    l.replace('first', 'short-grace'),
  );

describe('scenario files', () => {
  it('names a misspelt field, its scenario and line, and the field it meant', async () => {
    await expect(
      loadScenarios(file(second([['terminationGracePeriodSeconds', 'terminationGracePeriod']]))),
    ).rejects.toMatchObject({
      code: 'SCENARIO_INVALID',
      message: expect.stringMatching(
        /scenario "short-grace": terminationGracePeriod \(line 11\): `terminationGracePeriod` is not a scenario field; did you mean `terminationGracePeriodSeconds`\?$/,
      ),
    });
  });

  it('refuses an unknown field instead of ignoring it, and a stray preStop field', async () => {
    await expect(loadScenarios(file([...second([]), '    deleteDelaySeconds: 4']))).rejects.toThrow(
      /scenario "short-grace": deleteDelaySeconds \(line 14\): `deleteDelaySeconds` is not a scenario field; did you mean `deleteDelayMs`\?/,
    );
    await expect(loadScenarios(file(second([['{ kind: none }', '{ kind: exec-sleep, second: 3 }']])))).rejects.toThrow(
      /scenario "short-grace": preStop\.second \(line 10\): `second` is not a preStop field; did you mean `seconds`\?/,
    );
  });

  it('names a bad value by the scenario, not its index', async () => {
    await expect(loadScenarios(file(second([['workMs: 3000', 'workMs: 0']])))).rejects.toThrow(
      /scenario "short-grace": workMs \(line 12\): Too small/,
    );
  });

  it('still reads the shipped matrix', async () => {
    expect((await loadScenarios()).length).toBeGreaterThanOrEqual(8);
  });
});
