// vitest's globalSetup: the CLI's bundle built (when stale) once, before any file runs, so that the
// files' first spawns, side by side, do not each find it stale and build it.
import { freshBundle } from '../../bin/cli-bundle.js';

export default async function setup(): Promise<void> {
  await freshBundle();
}
