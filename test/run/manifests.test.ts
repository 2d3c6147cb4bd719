// Every scenario of every manifest in manifests/, on the simulated cluster, graded as `termlab run`
// grades it (test/support/manifest-run.ts): the pod manifests here, one after another (side by side,
// ~20 pods at once, two of three runs went inconclusive at load 15); the rollout manifest in manifests-rollout.test.ts,
// the edge manifest in manifests-edge.test.ts.
// The default matrix (scenarios.yaml) runs exactly as `npm start` runs it, and its files are checked whole.
import { describe, expect, it } from 'vitest';
import { expectManifestRuns, manifests, RUN_TIMEOUT_MS } from '../support/manifest-run.ts';

describe('every scenario of every manifest, on the simulated cluster, graded', () => {
  it('finds the scenario manifests, one of rollouts', () => {
    expect(manifests.map((m) => m.file).sort()).toEqual([
      'edge.yaml',
      'fidelity-edge.yaml',
      'retries.yaml',
      'rollout.yaml',
      'scenarios.yaml',
      'sidecars.yaml',
    ]);
    expect(manifests.filter((m) => m.rollouts).map((m) => m.file)).toEqual(['rollout.yaml']);
    expect(manifests.filter((m) => m.edges).map((m) => m.file)).toEqual(['edge.yaml']);
  });

  it.each(manifests.filter((m) => !m.rollouts && !m.edges).map((m) => [m.file, m] as const))(
    '%s',
    (_file, manifest) => expectManifestRuns(manifest),
    RUN_TIMEOUT_MS,
  );
});
