// `termlab grade DIR` to the terminal keeps only the lab pairs' halves and counts the rest as it goes: its
// summary, pairs and exit code must be those of the grading that keeps every result.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOf, gradePaths } from '../../harness/grade/files.ts';
import { failedOrInconclusive } from '../../harness/grade/grade.ts';
import { counted } from '../../harness/grade/attempts.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { GradeTally } from '../../harness/grade/tally.ts';
import type { GradeResult } from '../../harness/grade/types.ts';
import { BASE_SCENARIO, buildObservation, exampleObservations } from '../support/observations.ts';

function folder(files: Record<string, Observation>): string {
  const dir = mkdtempSync(join(tmpdir(), 'termlab-tally-'));
  for (const [name, o] of Object.entries(files))
    writeFileSync(join(dir, `${name}.observation.json`), JSON.stringify(o));
  return dir;
}

/** A second try of an example, as the runner writes it when the first did not count. */
const retried = (o: Observation, uid: string): Observation => ({
  ...o,
  run: { ...o.run, attempt: 2 },
  pod: { ...o.pod!, uid },
});

describe('the grading tally', () => {
  const examples = exampleObservations();
  const cases: [string, Record<string, Observation>][] = [
    // The hand-edited file's first try is evidence invalid; its second try, as recorded, counts.
    [
      'a bad first try that a good second try replaces',
      {
        'completed-0': examples['completed-0']!,
        'cut-137-after-grace': examples['cut-137-after-grace']!,
        'hand-edited': examples['evidence-invalid']!,
        'hand-edited.attempt-2': retried(
          buildObservation({ ...BASE_SCENARIO, name: 'hand-edited' }, undefined, 'uid-retry'),
          'uid-retry',
        ),
      },
    ],
    [
      'a bad last try',
      { 'cut-17-immediate': examples['cut-17-immediate']!, 'evidence-invalid': examples['evidence-invalid']! },
    ],
    // A pair half's second try written without its pair: it still replaces the first, which forms no pair.
    [
      'a pair half replaced by a try that is no pair half',
      {
        'completed-0': examples['completed-0']!,
        'cut-137-after-grace': examples['cut-137-after-grace']!,
        'cut-137-after-grace.attempt-2': retried(
          {
            ...examples['cut-137-after-grace']!,
            scenario: { ...examples['cut-137-after-grace']!.scenario, labPair: undefined },
          },
          'uid-retry-2',
        ),
      },
    ],
    ['a lab pair with one half missing', { 'completed-0': examples['completed-0']!, 'oom-137': examples['oom-137']! }],
  ];
  for (const [name, files] of cases) {
    it(`counts as the whole grading does: ${name}`, async () => {
      const dir = folder(files);
      const whole = await gradePaths([dir]);
      const slim = await gradePaths([dir], { slim: true });
      const wholeCounted = counted(whole.results);
      expect(slim.tally.graded).toBe(whole.results.length);
      expect(slim.tally.passed).toBe(whole.results.filter((r) => !failedOrInconclusive(r)).length);
      for (const verdict of ['matches-model', 'differs-from-model', 'inconclusive', 'evidence-invalid'] as const) {
        expect(slim.tally.verdicts[verdict], verdict).toBe(whole.results.filter((r) => r.verdict === verdict).length);
      }
      expect(slim.tally.countedBad()).toBe(wholeCounted.some(failedOrInconclusive));
      // The exit code as it was worked out from every result kept (each scenario's last try, and the pairs).
      expect(exitCodeOf(slim)).toBe(
        wholeCounted.some(failedOrInconclusive) || whole.pairs.some(failedOrInconclusive) ? 1 : 0,
      );
      expect(slim.pairs).toEqual(whole.pairs);
      // Only the pairs' halves are kept.
      expect(slim.results.map((r) => r.scenario).sort()).toEqual(
        whole.results
          .filter((r) => r.labPair)
          .map((r) => r.scenario)
          .sort(),
      );
    });
  }

  it("keeps each submission's tries apart: a passing try 2 in one archive hides no failing try 1 of another", async () => {
    const [bad, good] = await Promise.all([
      gradePaths([folder({ 'hand-edited': examples['evidence-invalid']! })]),
      gradePaths([
        folder({
          'hand-edited.attempt-2': retried(
            buildObservation({ ...BASE_SCENARIO, name: 'hand-edited' }, undefined, 'uid-retry'),
            'uid-retry',
          ),
        }),
      ]),
    ]);
    // As two archives in one folder are named: the same folder and run, the same scenario.
    const asMember = (r: GradeResult, archive: string) => ({ ...r, source: `/class/${archive}:${basename(r.source)}` });
    const all = new GradeTally();
    all.absorb(GradeTally.of(bad!.results.map((r) => asMember(r, 'a.tar.gz'))), '/class/a.tar.gz');
    all.absorb(GradeTally.of(good!.results.map((r) => asMember(r, 'b.tar.gz'))), '/class/b.tar.gz');
    expect(all.graded).toBe(2);
    expect(all.countedBad()).toBe(true);
    // Counted as one submission, the second try would have hidden the first.
    expect(
      GradeTally.of([
        ...bad!.results.map((r) => asMember(r, 'a.tar.gz')),
        ...good!.results.map((r) => asMember(r, 'b.tar.gz')),
      ]).countedBad(),
    ).toBe(false);
  });

  it('a good second try makes the exit code 0, a bad last try 1', async () => {
    const [replaced, lastBad] = await Promise.all(
      cases.slice(0, 2).map(([, files]) => gradePaths([folder(files)], { slim: true })),
    );
    expect(replaced!.tally.verdicts['evidence-invalid']).toBe(1);
    expect(exitCodeOf(replaced!)).toBe(0);
    expect(exitCodeOf(lastBad!)).toBe(1);
  });
});
