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
    // One file per core: vitest's default (one fewer than the cores) ran them one by one on 2 cores.
    // Not more: the CLI's start-up (~3 s of CPU each) and the rollouts' timing need the CPU, and with
    // two files per core on a loaded machine rollouts went inconclusive and CLI tests timed out.
    maxWorkers: Math.max(2, availableParallelism()),
    setupFiles: ['test/support/state-dir.ts'],
    globalSetup: ['test/support/bundle.ts'],
    sequence: { sequencer: LongestFirstSequencer },
  },
});
