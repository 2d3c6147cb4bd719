// Property tests with generated input (fast-check): observations with one claim changed by a
// generated amount, predictions files of any shape, and submission folders of any make-up.
// Each property: never a crash, never a hang, never "matches the model" for a changed claim.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { gradeClass } from '../../harness/class/command.ts';
import { isTermlabError } from '../../lib/errors.ts';
import { grade } from '../../harness/grade/grade.ts';
import { parsePredictions, predictionChecks } from '../../harness/grade/predictions.ts';
import { predict } from '../../harness/grade/theory.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { packRun } from '../../harness/pack/pack.ts';
import { writeRunDir } from '../class/fixtures.ts';
import { harmlessPatterns } from '../support/harmless.ts';
import { leaves, setAt } from '../support/mutations.ts';
import { repoRoot } from '../support/processes.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** A change of at least this much crosses every tolerance the grader has (docs/grading.md). */
const CLAIM_MS = 7_000;
const TEN_YEARS_MS = 10 * 365 * 86_400_000;

const examplesDir = join(repoRoot, 'reports', 'examples');
const matching = [
  'completed-0.observation.json',
  'cut-137-after-grace.observation.json',
  'cut-17-immediate.observation.json',
].map((file) => ({ file, data: JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as unknown }));

/** Every leaf a claim rests on, with its value: the lab server's JSON log lines opened up too. */
function slots(data: unknown): { path: string; value: unknown; set: (v: unknown) => unknown }[] {
  const out: { path: string; value: unknown; set: (v: unknown) => unknown }[] = [];
  for (const { path, value } of leaves(data, [])) {
    const isLogText = path.length === 4 && path[0] === 'evidence' && path[1] === 'logLines' && path[3] === 'text';
    if (isLogText && typeof value === 'string' && value.startsWith('{')) {
      const inner = JSON.parse(value) as unknown;
      for (const leaf of leaves(inner, []))
        out.push({
          path: `${path.join('.')}.${leaf.path.join('.')}`,
          value: leaf.value,
          set: (v) => setAt(data, path, JSON.stringify(setAt(inner, leaf.path, v))),
        });
      continue;
    }
    out.push({ path: path.join('.'), value, set: (v) => setAt(data, path, v) });
  }
  return out;
}

/** A value of the leaf's own kind, changed by at least a claim's worth. */
function changedValue(original: unknown): fc.Arbitrary<unknown> | null {
  const sign = fc.constantFrom(1, -1);
  if (typeof original === 'number')
    return fc.tuple(fc.integer({ min: CLAIM_MS, max: TEN_YEARS_MS }), sign).map(([d, s]) => original + s * d);
  if (typeof original === 'boolean') return fc.constant(!original);
  if (typeof original === 'string' && ISO.test(original)) {
    return fc
      .tuple(fc.integer({ min: CLAIM_MS, max: TEN_YEARS_MS }), sign)
      .map(([d, s]) => new Date(Date.parse(original) + s * d).toISOString());
  }
  if (typeof original === 'string') return fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s !== original);
  return null;
}

describe('generated changes to a recorded observation', () => {
  const harmless = harmlessPatterns();
  it.each(matching.map((e) => [e.file, e] as const))(
    '%s: a claim changed by a generated amount is never "matches the model", and never a crash',
    (_file, example) => {
      const claims = slots(example.data).filter(
        (s) => !harmless.some((p) => p.test(s.path)) && changedValue(s.value) !== null,
      );
      expect(claims.length).toBeGreaterThan(50);
      const change = fc
        .integer({ min: 0, max: claims.length - 1 })
        .chain((i) => changedValue(claims[i]!.value)!.map((value) => ({ slot: claims[i]!, value })));
      fc.assert(
        fc.property(change, ({ slot, value }) => {
          let verdict: string;
          try {
            verdict = grade(parseObservationFile(slot.set(value), example.file).observation).verdict;
          } catch (error) {
            if (!isTermlabError(error)) throw error;
            verdict = 'problem';
          }
          return verdict !== 'matches-model';
        }),
        { numRuns: 400, seed: 2026_12_01 },
      );
    },
  );
});

describe('generated predictions files', () => {
  const setup = {
    name: 'x',
    mode: 'graceful',
    preStop: { kind: 'none' },
    terminationGracePeriodSeconds: 5,
    workMs: 1000,
    deleteDelayMs: 100,
  } as const;
  const model = predict(setup, 5);
  const names = fc.oneof(
    fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'short-grace'),
    fc.string({ maxLength: 12 }),
  );
  // A retry scenario's attempts and effects too, here given for one without a retry policy.
  const count = fc.oneof(fc.integer({ min: -2, max: 6 }), fc.constant('1'));
  const entry = fc.oneof(
    fc.record(
      {
        outcome: fc.constantFrom('completed', 'cut', 'rejected', 'lost', ''),
        exitCode: fc.oneof(fc.integer({ min: -5, max: 300 }), fc.constant('0')),
        attempts: count,
        effects: count,
      },
      { requiredKeys: ['outcome', 'exitCode'] },
    ),
    fc.anything(),
  );
  const file = fc.oneof(
    fc.record(
      { student: fc.oneof(fc.string(), fc.integer()), predictions: fc.dictionary(names, entry) },
      { requiredKeys: [] },
    ),
    fc.anything(),
  );

  it('parse or are refused with PREDICTIONS_INVALID, and never say "undefined" for a scenario they lack', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          file.map((v) => stringify(v) ?? ''),
          fc.string(),
        ),
        names,
        (text, scenario) => {
          let parsed: ReturnType<typeof parsePredictions>;
          try {
            parsed = parsePredictions(text, 'generated.yaml');
          } catch (error) {
            if (!isTermlabError(error) || error.code !== 'PREDICTIONS_INVALID') throw error;
            return true;
          }
          const checks = predictionChecks(
            parsed,
            { ...setup, name: scenario },
            { outcome: 'completed', exitCode: 0 },
            model,
          );
          return checks.every((c) => !/undefined|\[object/.test(c.reason));
        },
      ),
      { numRuns: 500, seed: 2026_12_01 },
    );
  });
});

describe('generated submission folders', () => {
  const work = mkdtempSync(join(tmpdir(), 'termlab-generated-'));
  let packed: Buffer;

  const entry = fc.record({
    name: fc.oneof(
      fc.constantFrom(
        'ada.tar.gz',
        'bob.zip',
        'c.tgz',
        'd.tar',
        '__proto__',
        'constructor.tar.gz',
        'x.observation.json',
        'README.txt',
        '.hidden',
      ),
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$/),
    ),
    kind: fc.constantFrom('packed', 'bytes', 'empty-dir', 'dir-with-run', 'loop'),
    bytes: fc.uint8Array({ maxLength: 64 }),
  });

  it('are each entry graded or named as not graded, with no crash', async () => {
    const dir = writeRunDir(join(work, 'src'), { student: 'Ada Lovelace', tag: 'gen' });
    packed = readFileSync((await packRun(dir, { out: join(work, 'packed.tar.gz') })).archive);
    let folder = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(entry, { minLength: 1, maxLength: 5, selector: (e) => e.name }),
        async (entries) => {
          const root = join(work, `class-${folder++}`);
          mkdirSync(root);
          try {
            for (const e of entries) {
              const path = join(root, e.name);
              if (e.kind === 'packed') writeFileSync(path, packed);
              else if (e.kind === 'bytes') writeFileSync(path, e.bytes);
              else if (e.kind === 'empty-dir') mkdirSync(path);
              else if (e.kind === 'dir-with-run') {
                mkdirSync(path);
                writeFileSync(
                  join(path, 'a.observation.json'),
                  readFileSync(join(dir, 'short-grace.observation.json')),
                );
              } else symlinkSync(root, path);
            }
            const { book, missing } = await gradeClass([root], null);
            expect(missing).toEqual([]);
            const shown = new Set([...book.rows.map((r) => r.submission), ...book.skipped.map((s) => s.path)]);
            // A folder holding observations is one run directory: its observations and subfolders are part of it.
            const rootIsRun = shown.has(root);
            const partOfRun = (name: string) =>
              rootIsRun &&
              (name.endsWith('.observation.json') ||
                ['empty-dir', 'dir-with-run'].includes(entries.find((e) => e.name === name)?.kind ?? ''));
            const unaccounted = readdirSync(root).filter((name) => !shown.has(join(root, name)) && !partOfRun(name));
            expect(unaccounted).toEqual([]);
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 40, seed: 2026_12_01 },
    );
  }, 120_000);
});
