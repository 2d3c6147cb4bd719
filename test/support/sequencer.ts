// The suite's longest files start first, so that none of them starts last and runs on alone: vitest
// orders a fresh clone's files by size (it has no timings yet), which started the longest, a small
// file, after 700 s of a 900 s run. Once vitest has timings (a second run) it orders by them, as before.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files on a 2-core machine, longest first (vitest's per-file durations of a fresh clone's npm test, 2026-12-06, idle). */
export const LONGEST_FIRST = [
  'test/docs/guides.test.ts',
  // Not yet measured idle: ~120 s beside load 25-35 on 2 cores (2026-12-06), one command after another.
  'test/guides/follow.test.ts',
  'test/run/manifests.test.ts',
  'test/verify/stall-bound.test.ts',
  'test/run/manifests-rollout.test.ts',
  'test/rollout/sim.test.ts',
  'test/run/lost-path.test.ts',
  'test/package/bundle.test.ts',
  'test/verify/sim.test.ts',
  'test/faults/default-transport-down-20s.test.ts',
  'test/run/outage.test.ts',
  'test/verify/rbac.test.ts',
  'test/sim/sidecar-scenarios.test.ts',
  'test/sim/termination.test.ts',
  'test/sim/port-reuse.test.ts',
  'test/sim/kubectl.test.ts',
  'test/sim/deployments.test.ts',
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const hasTimings = sorted.some((f) =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`),
    );
    if (hasTimings) return sorted;
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}
