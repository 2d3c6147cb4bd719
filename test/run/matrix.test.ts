// The whole default matrix end to end on the simulated cluster, as `npm start` runs it.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { ObservationSchema } from '../../harness/observation.ts';
import { predict } from '../../harness/grade/theory.ts';
import { runCli } from '../support/cli.ts';

describe('termlab run --sim (default matrix)', () => {
  it('records a valid observation per scenario, each graded as the model predicts', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'termlab-matrix-')), 'run');
    const r = await runCli(['run', '--sim', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('lab pair grace: pass');
    const files = readdirSync(out).filter((f) => f.endsWith('.observation.json')).sort();
    expect(files).toEqual(['hook-fits-grace', 'hook-outlasts-grace', 'httpget-hook', 'immediate-exit', 'no-prestop', 'restored-grace', 'short-grace', 'sleep-action'].map((n) => `${n}.observation.json`));
    const uids = new Set<string>();
    for (const file of files) {
      const observation = ObservationSchema.parse(JSON.parse(readFileSync(join(out, file), 'utf8')));
      const result = grade(observation);
      expect(result.verdict, `${file}: ${result.explanation}`).toBe('matches-model');
      const model = predict(observation.scenario);
      expect(observation.request.outcome).toBe(model.outcome);
      expect(observation.finalState?.exitCode).toBe(model.exitCode);
      expect(observation.run.complete).toBe(true);
      expect(observation.cleanup.every((c) => c.ok)).toBe(true);
      uids.add(observation.pod!.uid);
      if (observation.scenario.preStop.kind === 'exec-sleep' || observation.scenario.preStop.kind === 'httpGet') {
        expect(observation.timeline.hookStart?.source).toBe('container-log');
      }
      if (observation.scenario.preStop.kind === 'sleep-action') expect(observation.timeline.hookStart?.source).toBe('inferred');
    }
    expect(uids.size).toBe(files.length);
    for (const report of ['report.md', 'report.html', 'junit.xml']) expect(readFileSync(join(out, report), 'utf8').length).toBeGreaterThan(500);
  });
});
