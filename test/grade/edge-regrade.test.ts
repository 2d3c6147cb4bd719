// An edge observation on disk regrades offline to the verdict the run gave it (the file holds every
// source the grade reads), and the edge pair is judged from the two files alone.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeEdge } from '../../harness/grade/edge/grade.ts';
import { gradeFile } from '../../harness/grade/files.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import { writeAnyObservation } from '../../harness/observation/write.ts';
import type { EdgeObservation } from '../../harness/observation/edge.ts';
import { edgeObservation, SETUPS } from '../support/edge-observation.ts';

async function onDisk(dir: string, o: EdgeObservation): Promise<string> {
  const path = join(dir, `${o.scenario.name}.observation.json`);
  await writeAnyObservation(path, o);
  return path;
}

/** The (c) half as a second Deployment of the same run: no request failed. */
function slept(): EdgeObservation {
  const o = edgeObservation(SETUPS.c, { dropFailures: true });
  o.objects.deployment = { ...o.objects.deployment!, uid: 'another-deployment' };
  return o;
}

describe('edge observations offline', () => {
  it('regrade from the file to the same grade as the observation in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-edge-regrade-'));
    for (const o of [edgeObservation(SETUPS.a), edgeObservation(SETUPS.d, { dropFailures: true, raceBeforeTerm: 2 })]) {
      const path = await onDisk(dir, o);
      const live = gradeEdge(o, { source: path });
      const again = await gradeFile(path);
      expect(again).toEqual(live);
      expect(again.verdict).toBe('matches-model');
    }
  });

  it('refuses a file whose edge section was edited out of shape, naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-edge-regrade-'));
    const o = edgeObservation(SETUPS.a) as any;
    const path = await onDisk(dir, o);
    const { writeFileSync, readFileSync } = await import('node:fs');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    json.edge.via = 'tcproute';
    writeFileSync(path, JSON.stringify(json));
    await expect(gradeFile(path)).rejects.toMatchObject({
      code: 'OBSERVATION_INVALID',
      message: expect.stringMatching(/edge\.via/),
    });
  });

  it('the edge pair passes when the sleep that outlasts the lag removed the failures, and fails when it did not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-edge-pair-'));
    const a = await gradeFile(await onDisk(dir, edgeObservation(SETUPS.a)));
    const c = await gradeFile(await onDisk(dir, slept()));
    const [pair] = gradePairs([a, c]);
    expect(pair!.checks).toEqual([
      expect.objectContaining({
        id: 'pair.edge',
        status: 'pass',
        reason: expect.stringMatching(/failed from the edge's lag with no preStop, none of/),
      }),
    ]);

    const failing = edgeObservation(SETUPS.c);
    failing.objects.deployment = { ...failing.objects.deployment!, uid: 'another-deployment' };
    const dir2 = mkdtempSync(join(tmpdir(), 'termlab-edge-pair-'));
    const a2 = await gradeFile(await onDisk(dir2, edgeObservation(SETUPS.a)));
    const c2 = await gradeFile(await onDisk(dir2, failing));
    const [broken] = gradePairs([a2, c2]);
    expect(broken!.checks[0]!.status).not.toBe('pass');
  });
});
