import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Files run side by side: none shares state with another (each starts its own simulated cluster on
    // ports the kernel picks, works in its own temporary folders, and keeps its run records apart, below).
    // Three files per core: the files mostly wait on real time (graces, hooks, the kubelet's pace). On a
    // 2-core machine: one per core 695 s (load 0.5-1.1); two per core 396 s, the cores half used; three per
    // core 276 s, every file passing, and beside two CPU-bound processes too (2026-12-05).
    maxWorkers: Math.max(3, availableParallelism() * 3),
    setupFiles: ['test/support/state-dir.ts'],
    globalSetup: ['test/support/bundle.ts'],
    sequence: { sequencer: LongestFirstSequencer },
  },
});
