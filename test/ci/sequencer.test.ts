// The suite's own order on a fresh clone: the longest files first, then vitest's order; and, once
// vitest has timings, vitest's order alone. Every file the list names must exist, or the list has rotted.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { LONGEST_FIRST, LongestFirstSequencer } from '../support/sequencer.ts';
import { repoRoot } from '../support/processes.ts';

const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: true } };
const spec = (file: string) => ({ project, moduleId: join(repoRoot, file) }) as unknown as TestSpecification;
const sizes = new Map([
  ['test/a.test.ts', 300],
  ['test/b.test.ts', 200],
  ['test/run/manifests.test.ts', 100],
  ['test/verify/sim.test.ts', 50],
]);

function sequencer(timed: boolean) {
  const ctx = {
    config: { root: repoRoot },
    cache: {
      getFileTestResults: (key: string) => (timed ? { duration: 1, failed: false, key } : undefined),
      getFileStats: (key: string) => ({ size: sizes.get(key.slice(1)) ?? 0 }),
    },
  } as unknown as Vitest;
  return new LongestFirstSequencer(ctx);
}

describe('the order the suite runs in', () => {
  it('starts the longest files first on a fresh clone, the rest largest first as vitest does', async () => {
    const order = await sequencer(false).sort([...sizes.keys()].map(spec));
    // The two listed files (the smallest here) first, in the list's order; then the rest, largest first.
    const listed = ['test/run/manifests.test.ts', 'test/verify/sim.test.ts'].sort(
      (a, b) => LONGEST_FIRST.indexOf(a) - LONGEST_FIRST.indexOf(b),
    );
    expect(order.map((s) => s.moduleId.slice(repoRoot.length).replace(/^\//, ''))).toEqual([
      ...listed,
      'test/a.test.ts',
      'test/b.test.ts',
    ]);
  });

  it('leaves the order to vitest once it has timings', async () => {
    const files = [...sizes.keys()].map(spec);
    const order = await sequencer(true).sort(files);
    expect(order.map((s) => s.moduleId)).toEqual(files.map((s) => s.moduleId));
  });

  it('names only files that exist', () => {
    expect(LONGEST_FIRST.filter((f) => !existsSync(join(repoRoot, f)))).toEqual([]);
  });
});
