// A student's run directory as `termlab run` leaves it: observations of the lab pair, a report,
// and a predictions file. Pod UIDs and the run id are the student's own.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seal } from '../../harness/grade/predictions.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

export const SHORT: Scenario = { ...BASE_SCENARIO, labPair: { id: 'grace', role: 'short' } };
export const RESTORED: Scenario = {
  ...BASE_SCENARIO,
  name: 'restored-grace',
  terminationGracePeriodSeconds: 15,
  labPair: { id: 'grace', role: 'restored' },
};

/** sealed false: a run started without --predictions, its predictions.yaml written beside it afterwards. */
export interface StudentRun {
  student: string;
  tag: string;
  shortCompleted?: boolean;
  predictions?: string;
  sealed?: boolean;
}

export const predictionsText = (student: string) =>
  `student: ${JSON.stringify(student)}\npredictions:\n  short-grace: { outcome: cut, exitCode: 137 }\n  restored-grace: { outcome: completed, exitCode: 0 }\n`;

export function writeRunDir(root: string, run: StudentRun): string {
  const dir = join(root, `run-${run.tag}`);
  mkdirSync(dir, { recursive: true });
  const short = buildObservation(
    SHORT,
    run.shortCompleted ? { outcome: 'completed', exitCode: 0 } : undefined,
    `uid-${run.tag}-short`,
  );
  const restored = buildObservation(RESTORED, undefined, `uid-${run.tag}-restored`);
  const predictions = run.predictions ?? predictionsText(run.student);
  for (const o of [short, restored]) {
    o.run.runId = `run-20261130-${run.tag}`;
    o.run.ownerId = run.tag;
    // As `termlab run --predictions` does: sealed before the first pod, in every observation.
    if (run.sealed !== false) o.run.predictions = seal(predictions, new Date(Date.parse(o.run.observedAt) - 60_000));
    writeFileSync(join(dir, `${o.scenario.name}.observation.json`), JSON.stringify(o, null, 2));
  }
  writeFileSync(join(dir, 'report.md'), `# termlab report of ${run.tag}\n`);
  writeFileSync(join(dir, 'predictions.yaml'), predictions);
  return dir;
}
