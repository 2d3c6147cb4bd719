// Files written by every earlier termlab grade as they did when written (issue 41): one recording of
// each observation schema version, graded from the file as `termlab grade` reads it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeFile } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import { OBSERVATION_SCHEMA_VERSION } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { ROLLOUT_SCHEMA_VERSION } from '../../harness/observation/rollout.ts';
import { repoRoot } from '../support/processes.ts';

const FIXTURES = join(repoRoot, 'test/grade/fixtures');
/** One recording per schema version, and its verdict when it was written. */
const RECORDINGS: [version: number, path: string][] = [
  [1, 'v1-cut-137-after-grace.observation.json'],
  // The same run as its runner wrote a 410 relist (below).
  [1, 'v1-relisted-410.observation.json'],
  [2, 'node/short-grace.observation.json'],
  [3, 'sim-grid/gr-http4-g3-w7000-d1500.observation.json'],
  [4, 'deadline/deadline-runs-out.observation.json'],
  [5, 'sidecar/sim/sidecar-native-proxy.observation.json'],
  [6, 'retries/v6-sim/retry-with-key.observation.json'],
  [7, 'retries/sim/retry-with-key.observation.json'],
];

describe('a recording of each schema version', () => {
  it('covers every version up to the current one', () => {
    expect([...new Set(RECORDINGS.map(([v]) => v))]).toEqual(
      Array.from({ length: OBSERVATION_SCHEMA_VERSION }, (_, i) => i + 1),
    );
  });

  it('the rollout kind, at its one version', async () => {
    const path = join(FIXTURES, 'rollout/node-rollout-adds-prestop.observation.json');
    expect(JSON.parse(readFileSync(path, 'utf8')).schemaVersion).toBe(ROLLOUT_SCHEMA_VERSION);
    expect((await gradeFile(path)).verdict).toBe('matches-model');
  });

  it.each(RECORDINGS)('version %i: %s matches the model, as when it was written', async (version, name) => {
    const path = join(FIXTURES, name);
    expect(JSON.parse(readFileSync(path, 'utf8')).schemaVersion).toBe(version);
    const r = await gradeFile(path);
    expect(r.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(r.verdict).toBe('matches-model');
  });
});

// v1-relisted-410 is v1-cut-137-after-grace with a 410 relist written in exactly as the version 1 runner
// (harness/run/watch.ts at 408b63f^, PodWatch.onDone) wrote one: the 410 ERROR not recorded; `dropped`
// ("the server closed the watch"); the list's pod pushed as a MODIFIED event received then, at the same
// resourceVersion and with the same state as the last event; and `expired-relisted` at the list's
// resourceVersion only once the new watch was answered.
describe('a version 1 file whose watch was relisted after a 410', () => {
  const load = (name: string) => {
    const path = join(FIXTURES, name);
    return parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path);
  };

  it('grades as the same run without the relist does, the relist named', () => {
    const [plain, relisted] = ['v1-cut-137-after-grace', 'v1-relisted-410'].map((n) => {
      const { observation, fileVersion } = load(`${n}.observation.json`);
      return grade(observation, { fileVersion });
    });
    expect(relisted!.verdict).toBe(plain!.verdict);
    expect(relisted!.checks.map((c) => [c.id, c.status])).toEqual(plain!.checks.map((c) => [c.id, c.status]));
    // Said otherwise only where the gap is: the watch's life, and the harness's time of the end, which a gap places not.
    const said = (r: ReturnType<typeof grade>) => Object.fromEntries(r.checks.map((c) => [c.id, c.reason]));
    const [was, is] = [said(plain!), said(relisted!)];
    const reworded = Object.keys(is).filter((id) => is[id] !== was[id]);
    expect(reworded).toEqual(['evidence.watch-life', 'evidence.run-complete', 'attribution.exit-code']);
    expect(is['evidence.watch-life']).toContain("410 relist's answer");
    expect(is['evidence.run-complete']).toContain('resumed 1 time(s)');
  });

  it('an event the current runner wrote while its watch was down is still evidence invalid', () => {
    const { observation } = load('v1-relisted-410.observation.json');
    // The current runner records a relist's answer as a pod read, never as an event before its entry.
    const r = grade(observation, { fileVersion: OBSERVATION_SCHEMA_VERSION });
    expect(r.checks.find((c) => c.id === 'evidence.watch-life')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('arrived after the watch dropped'),
    });
  });
});
