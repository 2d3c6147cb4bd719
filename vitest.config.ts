import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Files run side by side: none shares state with another (each starts its own simulated cluster on
    // ports the kernel picks, works in its own temporary folders, and keeps its run records apart, below).
    // Most of a file's time is spent waiting on graces, hooks and the kubelet's relists, not on the CPU,
    // so two files per core; vitest's default (one fewer than the cores) ran them one by one on 2 cores.
    maxWorkers: Math.max(2, availableParallelism() * 2),
    setupFiles: ['test/support/state-dir.ts'],
  },
});
