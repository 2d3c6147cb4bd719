// Property: change any one field of a committed example that matches the model, and the result is
// never "matches the model" unless docs/grading.md calls a change of that field harmless.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { isTermlabError } from '../../lib/errors.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { harmlessPatterns } from '../support/harmless.ts';
import { extremes, mutations, removals } from '../support/mutations.ts';
import { repoRoot } from '../support/processes.ts';

const examplesDir = join(repoRoot, 'reports', 'examples');

/** The real node's own recording of the default matrix (Kubernetes 1.34, `termlab run` on dev/node). */
const nodeDir = join(repoRoot, 'test', 'grade', 'fixtures', 'node');

const load = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.observation.json'))
    .map((file) => {
      const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
      return { file, data, verdict: grade(parseObservationFile(data, file).observation).verdict };
    });
const examples = load(examplesDir);
const matching = examples.filter((e) => e.verdict === 'matches-model');
const recordedOnNode = load(nodeDir);

describe('any one field changed', () => {
  const harmless = harmlessPatterns();

  it('reads the documented harmless fields, and they are not everything', () => {
    expect(harmless.length).toBeGreaterThan(20);
    for (const graded of [
      'request.outcome',
      'finalState.exitCode',
      'scenario.workMs',
      'timeline.deleteIssued.at.mono',
      'evidence.logLines.3.text.time',
    ]) {
      expect(
        harmless.some((p) => p.test(graded)),
        graded,
      ).toBe(false);
    }
    expect(harmless.some((p) => p.test('timeline.deleteIssued.at.wall'))).toBe(true);
  });

  it('has recorded examples that match the model to start from', () => {
    expect(matching.map((e) => e.file).sort()).toEqual([
      'completed-0.observation.json',
      'cut-137-after-grace.observation.json',
      'cut-17-immediate.observation.json',
    ]);
  });

  it("has the real node's recordings of the whole matrix, every one matching the model or too close to call", () => {
    expect(recordedOnNode).toHaveLength(8);
    // hook-outlasts-grace was recorded with 10 s of work, which ends inside the window the kubelet's
    // reaction leaves after the earliest kill; graded from its observed TERM (kill 7.06 s after the
    // delete, work ending 9 s after it) it is called, and matches. None is left too close to call.
    const tooClose: string[] = [];
    expect(recordedOnNode.filter((e) => e.verdict !== 'matches-model').map((e) => e.file)).toEqual(tooClose);
  });

  it.each([...matching.map((e) => [e.file, e] as const), ...recordedOnNode.map((e) => [`node/${e.file}`, e] as const)])(
    '%s: never "matches the model" after an undocumented change',
    (_file, example) => {
      const undocumentedPasses: string[] = [];
      let tried = 0;
      for (const mutation of mutations(example.data)) {
        if (harmless.some((p) => p.test(mutation.path))) continue;
        tried++;
        let verdict: string;
        try {
          verdict = grade(parseObservationFile(mutation.data, example.file).observation).verdict;
        } catch (error) {
          if (!isTermlabError(error)) throw error;
          verdict = 'problem';
        }
        if (verdict === 'matches-model') undocumentedPasses.push(mutation.path);
      }
      expect(tried).toBeGreaterThan(100);
      expect(undocumentedPasses).toEqual([]);
    },
  );

  it.each(examples.map((e) => [e.file, e] as const))(
    '%s: a field nulled, an entry removed or a value at its edge is a problem or a verdict, never a crash',
    (_file, example) => {
      let graded = 0;
      for (const mutation of [...removals(example.data), ...extremes(example.data)]) {
        try {
          const result = grade(parseObservationFile(mutation.data, example.file).observation);
          renderHtml([result]);
          renderMarkdown([result]);
          graded++;
        } catch (error) {
          if (!isTermlabError(error)) throw new Error(`${mutation.path}: ${(error as Error).stack}`);
        }
      }
      expect(graded).toBeGreaterThan(10);
    },
  );
});
