// The one writer of observation files: either kind (as the one reader gives it, a file of an older version
// included) goes through its schema and comes back the same; a file larger than the readers read is refused before anything is written.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_OBSERVATION_BYTES } from '../../harness/observation/schema.ts';
import { readAnyObservationFile } from '../../harness/observation/read.ts';
import { writeAnyObservation } from '../../harness/observation/write.ts';
import { repoRoot } from '../support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'termlab-observation-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILES = {
  pod: join(repoRoot, 'reports/examples/completed-0.observation.json'),
  rollout: join(repoRoot, 'test/grade/fixtures/rollout/node-rollout-adds-prestop.observation.json'),
} as const;

describe.each(Object.entries(FILES))('a %s observation', (kind, source) => {
  it('is written through its schema and read back the same by the one reader', async () => {
    const observation = structuredClone((await readAnyObservationFile(source)).observation) as any;
    const path = join(dir, `${kind}.observation.json`);
    await writeAnyObservation(path, observation);
    const read = await readAnyObservationFile(path);
    expect(read.kind).toBe(kind);
    expect(read.observation).toEqual(observation);
  });

  it('larger than the readers read is refused, naming its size, and nothing is written', async () => {
    const observation = structuredClone((await readAnyObservationFile(source)).observation) as any;
    observation.run.harnessVersion = 'x'.repeat(MAX_OBSERVATION_BYTES);
    const path = join(dir, `${kind}-too-large.observation.json`);
    await expect(writeAnyObservation(path, observation)).rejects.toThrow(
      /^the observation is \d+ bytes, more than the 16777216 \(16 MiB\) an observation file may hold$/,
    );
    expect(existsSync(path)).toBe(false);
  });
});
