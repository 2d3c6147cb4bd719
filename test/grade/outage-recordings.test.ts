// Real-node recordings of a run whose API server was killed for 20 s during terminating
// (npm run test:cluster:faults): the watch dropped and resumed, the log stream was cut, and the
// end was seen only when the API came back. The verdict must be the one the run earned without
// the fault, taken from the API's own times, not from when the harness saw the end.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeFile } from '../../harness/grade/files.ts';

const dir = join(import.meta.dirname, 'fixtures', 'outage');

describe('recordings of a 20 s API outage on the real node', () => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.observation.json'))
    .sort();

  it('has both halves of the lab pair', () => {
    expect(files).toEqual(['restored-grace.observation.json', 'short-grace.observation.json']);
  });

  it.each(files)('%s: a watch gap is in the evidence and the verdict still matches the model', async (file) => {
    const result = await gradeFile(join(dir, file));
    expect(result.verdict, result.explanation).toBe('matches-model');
    expect(result.checks.find((c) => c.id === 'evidence.run-complete')?.reason).toMatch(/resumed/);
  });
});
