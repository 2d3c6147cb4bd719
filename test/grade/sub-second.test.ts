// Sub-second timing is never graded (docs/grading.md): a run that lands on the other side of the kill than
// the model, by less than a second, is too close to call, never "differs". The observed TERM resolves a
// match to 0.1 s, but the kill is the runtime's timer after the signal, not a line the server logs: under
// load it fires late and the server's TERM line comes late, by tenths of a second (0.31 s seen).
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { sidecarOutcomes } from '../../harness/grade/containers.ts';
import { factsOf } from '../../harness/grade/facts.ts';
import { retryCause } from '../../harness/grade/retry-cause.ts';
import { exitState } from '../../harness/grade/outcome.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { buildObservation } from '../support/observations.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { repoRoot } from '../support/processes.ts';

/** Graceful, no hook, grace 5 s: the kill is the observed TERM (0.07 s after the delete) + 5 s. */
const scenario = (workMs: number): Scenario => ({
  name: 'hair',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 5,
  workMs,
  deleteDelayMs: 1_000,
});
const outcomeChecks = (r: ReturnType<typeof grade>) =>
  r.checks.filter((c) => c.id === 'outcome.request' || c.id === 'outcome.exit-code');

describe('a run on the other side of the kill by less than a second', () => {
  it('work ends 0.3 s before the kill, the kubelet killed a little early (cut, 137): too close to call', () => {
    const r = grade(buildObservation(scenario(5_770), { outcome: 'cut', exitCode: 137, exitAt: 4.7 }));
    expect(r.prediction).toMatchObject({ basis: 'observed', outcome: 'completed', exitCode: 0 });
    expect(r.prediction!.marginSeconds).toBeGreaterThan(r.prediction!.resolutionSeconds);
    expect(r.prediction!.marginSeconds).toBeLessThan(1);
    expect(outcomeChecks(r)).toEqual([
      expect.objectContaining({ status: 'inconclusive', reason: expect.stringContaining('too close to call') }),
      expect.objectContaining({ status: 'inconclusive', reason: expect.stringContaining('too close to call') }),
    ]);
    expect(r.verdict).toBe('inconclusive');
  });

  it('work ends 0.3 s after the kill, the kill came a little late (completed, 0): too close to call', () => {
    const r = grade(buildObservation(scenario(6_370), { outcome: 'completed', exitCode: 0, exitAt: 5.4 }));
    expect(r.prediction).toMatchObject({ basis: 'observed', outcome: 'cut', exitCode: 137 });
    expect(outcomeChecks(r).map((c) => c.status)).toEqual(['inconclusive', 'inconclusive']);
    expect(r.verdict).toBe('inconclusive');
  });

  it('the same margin, landing where the model says, still matches: the observed TERM resolves it', () => {
    expect(grade(buildObservation(scenario(5_770))).verdict).toBe('matches-model');
    expect(grade(buildObservation(scenario(6_370))).verdict).toBe('matches-model');
  });

  it('a second or more from the kill, the other side still differs', () => {
    const r = grade(buildObservation(scenario(5_000), { outcome: 'cut', exitCode: 137, exitAt: 4.0 }));
    expect(r.prediction!.marginSeconds).toBeGreaterThanOrEqual(1);
    expect(outcomeChecks(r).map((c) => c.status)).toEqual(['fail', 'fail']);
    expect(r.verdict).toBe('differs-from-model');
  });
});

describe('a memory kill the model predicts a fraction of a second before the grace runs out', () => {
  it('is too close to call when the kill came first (137 Error), never a fail and never a pass on the code alone', () => {
    // 224 MiB at 64 MiB/s: the limit 3.5 s after TERM; the grace's kill 4 s after it.
    const oom: Scenario = {
      ...scenario(10_000),
      terminationGracePeriodSeconds: 4,
      memoryLimitMiB: 224,
      termAllocateMiB: 512,
    };
    const o = buildObservation(oom, { outcome: 'cut', exitCode: 137, reason: 'Error', exitAt: 4.07 });
    const r = grade(o);
    expect(r.prediction).toMatchObject({ reason: 'OOMKilled', exitCode: 137, basis: 'observed' });
    expect(r.prediction!.marginSeconds).toBeCloseTo(0.5, 3);
    expect(exitState(factsOf(o), r.prediction!)).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringContaining('too close to call'),
    });
  });
});

describe('a lab pair half on the other side of the kill by less than a second', () => {
  it('is run again as too close to call, not counted as the kubelet differing', () => {
    const short = { ...scenario(5_770), labPair: { id: 'grace', role: 'short' as const } };
    const r = grade(buildObservation(short, { outcome: 'cut', exitCode: 137, exitAt: 4.7 }));
    expect(retryCause(r)).toEqual({
      label: 'too close to call',
      reason: `could not be called: its work ended within ${r.prediction!.marginSeconds.toFixed(3)}s of the kill`,
    });
  });
});

describe("a sidecar's exit code on the other side of a decisive time by less than a second", () => {
  it('is too close to call, not a fail', () => {
    const path = join(repoRoot, 'test/grade/fixtures/sidecar/sim/sidecar-native-short-grace.observation.json');
    const o = parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path).observation;
    const model = grade(o).prediction!;
    const proxy = model.pod!.containers.find((c) => c.role === 'sidecar')!;
    // The model's answer as it would be with its decisive times 0.4 s apart and the proxy's code the other one.
    const near = {
      ...model,
      marginSeconds: 0.4,
      pod: {
        ...model.pod!,
        containers: model.pod!.containers.map((c) =>
          c === proxy ? { ...c, exitCode: proxy.exitCode === 0 ? 137 : 0 } : c,
        ),
      },
    };
    const exit = sidecarOutcomes(factsOf(o), near).find((c) => c.id === 'outcome.sidecar-exit-code')!;
    expect(exit).toMatchObject({ status: 'inconclusive', reason: expect.stringContaining('too close to call') });
  });
});
