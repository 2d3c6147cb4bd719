import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Run records of the runs tests start stay out of the user's own state directory.
    env: { TERMLAB_STATE_DIR: mkdtempSync(join(tmpdir(), 'termlab-test-state-')) },
  },
});
