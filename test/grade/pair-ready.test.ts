// The checks every two-run pair (retries, sidecars, stop signal) makes before its own rule.
import { describe, expect, it } from 'vitest';
import { pairVerdict, readyPair } from '../../harness/grade/pair-ready.ts';
import type { GradeResult } from '../../harness/grade/types.ts';

const half = (role: 'no-key' | 'with-key', verdict: GradeResult['verdict'], explanation = '') =>
  ({ verdict, explanation, labPair: { id: 'retries', role } }) as unknown as GradeResult;

describe('readyPair', () => {
  it('names a half whose evidence was invalid, with its roles only when asked', () => {
    const none = readyPair(
      'retries',
      [
        { role: 'no-key', result: undefined },
        { role: 'with-key', result: half('with-key', 'matches-model') },
      ],
      new Set(['no-key'] as const),
    );
    expect(Array.isArray(none)).toBe(false);
    expect(none).toEqual({
      pairId: 'retries',
      checks: [
        expect.objectContaining({
          id: 'pair.retries',
          status: 'inconclusive',
          reason: 'the pair cannot be graded: the evidence of the no-key run is invalid',
        }),
      ],
    });
    const withRoles = readyPair(
      'retries',
      [
        { role: 'no-key', result: undefined },
        { role: 'with-key', result: undefined },
      ],
      new Set(['no-key', 'with-key'] as const),
      { reportInvalidRoles: true },
    );
    expect(withRoles).toMatchObject({ invalidRoles: ['no-key', 'with-key'] });
    expect(JSON.stringify(withRoles)).toContain('the no-key- and with-key run is invalid');
  });

  it('names the first missing half, by its longer name where it has one', () => {
    const r = readyPair(
      'retries',
      [
        { role: 'no-key', result: half('no-key', 'matches-model') },
        { role: 'with-key', result: undefined, missingName: 'with-key (an idempotency key)' },
      ],
      new Set(),
    );
    expect(JSON.stringify(r)).toContain('the pair needs both runs; missing the with-key (an idempotency key) one');
  });

  it('is inconclusive while either run is, quoting why, and hands back both runs otherwise', () => {
    const open = readyPair(
      'retries',
      [
        { role: 'no-key', result: half('no-key', 'inconclusive', 'too close to call') },
        { role: 'with-key', result: half('with-key', 'matches-model') },
      ],
      new Set(),
    );
    expect(JSON.stringify(open)).toContain('the no-key run is inconclusive: too close to call');
    const a = half('no-key', 'matches-model');
    const b = half('with-key', 'differs-from-model');
    expect(
      readyPair(
        'retries',
        [
          { role: 'no-key', result: a },
          { role: 'with-key', result: b },
        ],
        new Set(),
      ),
    ).toEqual([a, b]);
  });
});

describe('pairVerdict', () => {
  const run = (workMs: number, podUid: string | null) => ({ kind: 'pod', workMs, podUid }) as unknown as GradeResult;

  it('fails a pair whose halves differ in work or claim one pod, after its own problems', () => {
    const r = pairVerdict('retries', [run(6000, 'u1'), run(5000, 'u1')], ['the no-key run was cut'], 'passed');
    expect(r.checks).toEqual([
      expect.objectContaining({
        id: 'pair.retries',
        status: 'fail',
        reason:
          'the no-key run was cut; the work differs (6000 vs 5000 ms); both runs claim the same pod UID: they must be two pods',
      }),
    ]);
    expect(JSON.stringify(pairVerdict('retries', [run(6000, null), run(6000, 'u2')], [], 'passed'))).toContain(
      'same pod UID',
    );
  });

  it('passes with its own sentence when nothing went wrong', () => {
    expect(pairVerdict('retries', [run(6000, 'u1'), run(6000, 'u2')], [], 'the lesson held').checks).toEqual([
      expect.objectContaining({ status: 'pass', reason: 'the lesson held' }),
    ]);
  });
});
