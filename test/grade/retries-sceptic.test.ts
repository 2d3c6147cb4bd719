// Sceptic findings on the retries grader (issue 27): one-field edits of a recorded run that still grade
// "matches the model", and an interrupted run's file that crashes the grader. Each failed on a929596.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { repoRoot } from '../support/processes.ts';

const DIR = join(repoRoot, 'test/grade/fixtures/retries/sim');
const raw = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.observation.json`), 'utf8'));
const parse = (data: unknown): Observation => parseObservationFile(data, 'edited').observation;
type Line = { text: string };
const editLine = (
  lines: Line[],
  pick: (j: Record<string, unknown>) => boolean,
  edit: (j: Record<string, unknown>) => void,
) => {
  const line = lines.find((l) => pick(JSON.parse(l.text)))!;
  const j = JSON.parse(line.text);
  edit(j);
  line.text = JSON.stringify(j);
};

const edits: [string, (d: any) => void][] = [
  [
    'attempt 2 sent 7 s later (after its own acceptance)',
    (d) => {
      d.retries.attempts[1].sent.mono += 7000;
    },
  ],
  [
    'attempt 2 status 500 while its outcome is completed',
    (d) => {
      d.retries.attempts[1].status = 500;
    },
  ],
  [
    "the standby's effect line 7 s later",
    (d) =>
      editLine(
        d.retries.standby.logLines,
        (j) => j.event === 'effect',
        (j) => {
          j.mono = (j.mono as number) + 7000;
        },
      ),
  ],
  [
    "the ledger's second record 7 s later (after the server logged its answer)",
    (d) =>
      editLine(
        d.retries.ledger.logLines,
        (j) => j.seq === 2 && j.event === 'applied',
        (j) => {
          j.mono = (j.mono as number) + 7000;
        },
      ),
  ],
  [
    "the ledger's exit line claims 5 records",
    (d) =>
      editLine(
        d.retries.ledger.logLines,
        (j) => j.event === 'exit',
        (j) => {
          j.records = 5;
        },
      ),
  ],
  [
    "the ledger's log marked as ended early",
    (d) => {
      d.retries.ledger.logEndedEarly = true;
    },
  ],
];

describe('a one-field edit of a retry run is never "matches the model"', () => {
  it.each(edits)('%s', (_name, edit) => {
    const d = raw('retry-doubles-effect');
    expect(grade(parse(d)).verdict).toBe('matches-model');
    edit(d);
    expect(grade(parse(d)).verdict).not.toBe('matches-model');
  });

  it.each([['cut'], ['rejected']])(
    "attempt 2's outcome edited to %s (its pod logged it completed) is evidence invalid, not a verdict",
    (outcome) => {
      const d = raw('retry-doubles-effect');
      d.retries.attempts[1].outcome = outcome;
      expect(grade(parse(d)).verdict).toBe('evidence-invalid');
    },
  );
});

describe('an interrupted retry run', () => {
  it('(Ctrl-C while waiting for Ready) grades without crashing', () => {
    const path = join(repoRoot, 'test/grade/fixtures/retries/interrupted/retry-doubles-effect.observation.json');
    const o = parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path).observation;
    expect(() => grade(o)).not.toThrow();
  });
});

describe('a file of an older version', () => {
  it('with a retries record written in is refused, naming the field (it was graded from it, with a note saying it had none)', () => {
    const d = raw('retry-doubles-effect');
    d.schemaVersion = 5;
    expect(() => parse(d)).toThrow(/retries: a file of this version has no retries record \(it came with version 6\)/);
  });
});
