// The one derivation of the timeline (harness/observation/timeline.ts): every recorded file's
// timeline is what it gives from the file's evidence, and the grader names the field that is not.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { DERIVED_TIMELINE_FIELDS, deriveTimeline } from '../../harness/observation/timeline.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';
import { repoRoot } from '../support/processes.ts';

function observationFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? observationFiles(path) : name.endsWith('.observation.json') ? [path] : [];
  });
}
const pods = [
  ...observationFiles(join(repoRoot, 'reports/examples')),
  ...observationFiles(join(repoRoot, 'test/grade/fixtures')),
]
  .map((path) => ({
    path: relative(repoRoot, path),
    json: JSON.parse(readFileSync(path, 'utf8')) as { kind?: string },
  }))
  .filter((f) => f.json.kind === 'termlab.observation');
const read = (json: unknown, name: string) => parseObservationFile(json, name).observation;
const derivedOf = (o: Observation) =>
  deriveTimeline({
    scenario: o.scenario,
    pod: o.pod,
    deleteIssued: o.timeline.deleteIssued?.at ?? null,
    evidence: o.evidence,
  });
const cited = (o: Observation) => grade(o).checks.find((c) => c.id === 'evidence.timeline-cited')!;
/** A point as the comparison sees it: the inference's basis is prose, not a claim. */
const claim = (point: unknown) =>
  point && typeof point === 'object' && 'basis' in point ? { ...point, basis: '' } : point;

describe('deriveTimeline', () => {
  it('there are recorded files to check', () => {
    expect(pods.length).toBeGreaterThan(20);
  });

  it.each(pods.map((f) => [f.path, f.json] as const))(
    '%s: the timeline it holds is the one its evidence gives',
    (path, json) => {
      const o = read(json, path);
      const derived = derivedOf(o);
      for (const field of DERIVED_TIMELINE_FIELDS)
        expect(claim(o.timeline[field]), field).toEqual(claim(derived[field]));
      expect(cited(o).status, cited(o).reason).toBe('pass');
    },
  );

  it("the built fixtures take their timeline from it, so a sleep action's span is inferred the runner's way", () => {
    const o = buildObservation({ ...BASE_SCENARIO, preStop: { kind: 'sleep-action', seconds: 2 } });
    expect(o.timeline.hookStart).toMatchObject({ source: 'inferred', from: { kind: 'watch', resourceVersion: '105' } });
    expect(o.timeline.hookEnd).toMatchObject({ source: 'inferred', from: { kind: 'log' } });
    expect(cited(o).status).toBe('pass');
  });

  it.each([
    [
      'containerTerminated',
      (o: Observation) => {
        o.timeline.containerTerminated = {
          ...o.timeline.containerTerminated!,
          from: { kind: 'watch', type: 'DELETED', resourceVersion: '108' },
        };
      },
    ],
    [
      'hookStart',
      (o: Observation) => {
        o.timeline.hookStart = {
          ...o.timeline.hookStart!,
          from: { kind: 'log', line: 0 },
        } as Observation['timeline']['hookStart'];
      },
    ],
    [
      'podDeleted',
      (o: Observation) => {
        o.timeline.podDeleted = null;
      },
    ],
    [
      'termReceived',
      (o: Observation) => {
        o.timeline.termReceived = { ...o.timeline.termReceived!, signal: 'SIGINT' };
      },
    ],
  ] as const)('a %s the evidence does not give is evidence invalid, naming the field', (field, edit) => {
    const o = buildObservation();
    edit(o);
    expect(cited(o)).toMatchObject({ status: 'fail', reason: expect.stringContaining(`timeline.${field}`) });
    expect(grade(o).verdict).toBe('evidence-invalid');
  });
});
