// The hooks that fail (an exec that exits 1 at once, an httpGet to a closed port) on the simulated
// cluster, graded: before the pod contract the grader called both runs "evidence invalid".
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { ObservationSchema } from '../../harness/observation.ts';
import { runCli } from '../support/cli.ts';

describe('termlab run --sim: the failing hooks of manifests/fidelity-edge.yaml', () => {
  it('exec-hook-fails and httpget-closed-port each match the model', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'termlab-edge-')), 'run');
    const r = await runCli(['run', '--sim', '--scenarios', 'manifests/fidelity-edge.yaml', '--only', 'exec-hook-fails,httpget-closed-port', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code, r.stdout).toBe(0);
    for (const name of ['exec-hook-fails', 'httpget-closed-port']) {
      const o = ObservationSchema.parse(JSON.parse(readFileSync(join(out, `${name}.observation.json`), 'utf8')));
      const result = grade(o);
      expect(result.verdict, `${name}: ${result.explanation}`).toBe('matches-model');
      // Each hook failed as the kubelet reports it, and the container was stopped anyway.
      expect(o.evidence.podEvents.some((e) => e.reason === 'FailedPreStopHook'), name).toBe(true);
      const hookLines = o.evidence.logLines.filter((l) => l.text.includes('"event":"hook-'));
      expect(hookLines.map((l) => JSON.parse(l.text).fail ?? null)).toEqual(name === 'exec-hook-fails' ? [true] : []);
    }
  });
});
