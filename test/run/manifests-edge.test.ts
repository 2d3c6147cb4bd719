// The edge lab end to end on the simulated cluster (`termlab run --sim --scenarios manifests/edge.yaml`, which
// starts the simulated edge): (a)-(d) each graded as the model says and the edge pair passing (in
// expectManifestRuns), and every saved observation regraded offline to the verdict the run printed.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { runCli } from '../support/cli.ts';
import { expectManifestRuns, manifests, RUN_TIMEOUT_MS } from '../support/manifest-run.ts';

describe('the edge lab on the simulated cluster', () => {
  it.each(manifests.filter((m) => m.edges).map((m) => [m.file, m] as const))(
    '%s: each scenario as the model says, the pair passing',
    (_file, manifest) => expectManifestRuns(manifest),
    RUN_TIMEOUT_MS,
  );

  it(
    "the pair's halves alone: the run's verdicts are the offline grade's, file by file",
    async () => {
      const out = join(mkdtempSync(join(tmpdir(), 'termlab-edge-pair-')), 'run');
      const r = await runCli([
        'run',
        '--sim',
        '--reveal',
        '--scenarios',
        'manifests/edge.yaml',
        '--only',
        'edge-no-prestop,edge-sleep-outlasts-lag',
        '--output-dir',
        out,
      ]);
      expect(readdirSync(out).filter((f) => f.endsWith('.observation.json'))).toHaveLength(2);
      const { results, pairs } = await gradePaths([out]);
      // The run's own table, one row per scenario, says what the files regrade to.
      for (const g of results) {
        const row = r.stdout.split('\n').find((l) => l.startsWith(`${g.scenario} `));
        expect(row, g.scenario).toContain(g.verdict === 'matches-model' ? 'matches the model' : '?');
      }
      expect(results.map((x) => x.verdict)).toEqual(['matches-model', 'matches-model']);
      expect(r.code).toBe(0);
      expect(pairs.map((p) => p.checks[0]!.status)).toEqual(['pass']);
    },
    RUN_TIMEOUT_MS,
  );
});
