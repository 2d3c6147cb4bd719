// The rollout manifest of test/run/manifests.test.ts, in a file of its own so that its three rollouts
// (one after another, as termlab runs them: about 80 s) run beside the pod manifests, not after them.
import { describe, it } from 'vitest';
import { expectManifestRuns, manifests, RUN_TIMEOUT_MS } from '../support/manifest-run.ts';

describe('every scenario of every manifest, on the simulated cluster, graded', () => {
  it.each(manifests.filter((m) => m.rollouts).map((m) => [m.file, m] as const))(
    '%s',
    (_file, manifest) => expectManifestRuns(manifest),
    RUN_TIMEOUT_MS,
  );
});
