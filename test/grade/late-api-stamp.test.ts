// A busy API server stamps a deletion late: recorded on one simulated cluster with 40 students at
// once, the delete was answered 3.7 s after the harness sent it, and its deletionTimestamp came from
// then. The API's times and the harness clock still agree once the span is bounded from the answer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';

const file = join(import.meta.dirname, 'fixtures', 'late-api-stamp', 'restored-grace.observation.json');
const load = () => parseObservationFile(JSON.parse(readFileSync(file, 'utf8')), file).observation;

describe('a deletion the API stamped late', () => {
  it("is the API's delay, never evidence invalid: the run matches the model", () => {
    const o = load();
    expect(o.timeline.deleteAcknowledged!.at.mono - o.timeline.deleteIssued!.at.mono).toBeGreaterThan(3000);
    const result = grade(o);
    expect(result.checks.find((c) => c.id === 'evidence.api-times')).toMatchObject({ status: 'pass' });
    expect(result.verdict).toBe('matches-model');
  });

  it("never matches a finishedAt edited to before the delete's answer allows: a late status or an edit, the end not placed", () => {
    const o = load();
    o.finalState!.finishedAt = new Date(Date.parse(o.finalState!.finishedAt!) - 5000).toISOString().replace('.000', '');
    const graded = grade(o);
    expect(graded.verdict).not.toBe('matches-model');
    expect(graded.checks.find((c) => c.id === 'evidence.api-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining(
        'the kubelet reported the end late (a busy node writes statuses seconds late) or finishedAt was edited',
      ),
    });
  });
  it('still refutes a finishedAt edited to after the watch saw the container end', () => {
    const o = load();
    o.finalState!.finishedAt = new Date(Date.parse(o.finalState!.finishedAt!) + 15_000)
      .toISOString()
      .replace('.000', '');
    expect(grade(o).checks.find((c) => c.id === 'evidence.api-times')).toMatchObject({ status: 'fail' });
  });
});
