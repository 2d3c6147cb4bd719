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
    // Two files per core: the files mostly wait on real time (graces, hooks, the kubelet's pace), and at one
    // per core a 2-core machine sat at load 0.5-1.1 for the whole suite (695 s); at two per core 395 s,
    // every file passing (2026-12-04).
    maxWorkers: Math.max(2, availableParallelism() * 2),
    setupFiles: ['test/support/state-dir.ts'],
    globalSetup: ['test/support/bundle.ts'],
    sequence: { sequencer: LongestFirstSequencer },
  },
});
