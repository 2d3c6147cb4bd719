// Runs the grader once called wrong, on the simulated cluster, graded: the hooks that fail (an exec
// that exits 1 at once, an httpGet to a closed port; both were "evidence invalid" before the pod
// contract) and a server that ignores TERM whose work ends before the kill (the model said exit 0;
// such a server never exits on its own, so SIGKILL ends it: 137).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { grade } from '../../harness/grade/grade.ts';
import { ObservationSchema } from '../../harness/observation/schema.ts';
import { repoRoot } from '../support/processes.ts';
import { runCli } from '../support/cli.ts';

const edges = parse(readFileSync(join(repoRoot, 'manifests/fidelity-edge.yaml'), 'utf8')).scenarios as {
  name: string;
}[];
const ignoreTerm = {
  name: 'ignore-term-work-done',
  mode: 'ignore-term',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 3,
  workMs: 2000,
  deleteDelayMs: 1000,
};

describe('termlab run --sim: scenarios the grader once got wrong', () => {
  it('exec-hook-fails, httpget-closed-port and an ignore-term run whose work ends first each match the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-edges-'));
    const file = join(dir, 'scenarios.yaml');
    writeFileSync(
      file,
      stringify({
        scenarios: [
          ...edges.filter((s) => s.name === 'exec-hook-fails' || s.name === 'httpget-closed-port'),
          ignoreTerm,
        ],
      }),
    );
    const out = join(dir, 'run');
    const r = await runCli(['run', '--sim', '--scenarios', file, '--output-dir', out]);
    expect(r.stderr).toBe('');
    expect(r.code, r.stdout).toBe(0);
    const read = (name: string) =>
      ObservationSchema.parse(JSON.parse(readFileSync(join(out, `${name}.observation.json`), 'utf8')));
    for (const name of ['exec-hook-fails', 'httpget-closed-port']) {
      const o = read(name);
      const result = grade(o);
      expect(result.verdict, `${name}: ${result.explanation}`).toBe('matches-model');
      // Each hook failed as the kubelet reports it, and the container was stopped anyway.
      expect(
        o.evidence.podEvents.some((e) => e.reason === 'FailedPreStopHook'),
        name,
      ).toBe(true);
      const hookLines = o.evidence.logLines.filter((l) => l.text.includes('"event":"hook-'));
      expect(hookLines.map((l) => JSON.parse(l.text).fail ?? null)).toEqual(name === 'exec-hook-fails' ? [true] : []);
    }
    const o = read(ignoreTerm.name);
    const result = grade(o);
    expect(result.verdict, result.explanation).toBe('matches-model');
    expect([o.request.outcome, o.finalState?.exitCode]).toEqual(['completed', 137]);
  });
});
