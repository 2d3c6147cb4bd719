// A rollout is predicted with the kubelet's rules of the minor its cluster runs, as a pod's grading is
// (issue 43: predictOldPod took the newest minor's minimum grace whatever the cluster). Every minor's
// minimumGracePeriodSeconds is 2 today, so the rules a prediction used are observed directly: the ones
// predictOldPod was handed, and the ones the grade records.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { gradeRollout } from '../../harness/grade/rollout/grade.ts';
import { predictOldPod } from '../../harness/grade/rollout/theory.ts';
import { NEWEST_MINOR, RULES_BY_MINOR } from '../../harness/grade/theory.ts';
import { RolloutObservationSchema, type RolloutObservation } from '../../harness/observation/rollout.ts';

vi.mock('../../harness/grade/rollout/theory.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../harness/grade/rollout/theory.ts')>();
  return { ...actual, predictOldPod: vi.fn(actual.predictOldPod) };
});

const FIXTURE = new URL('./fixtures/rollout/node-rollout-adds-prestop.observation.json', import.meta.url);
const load = (serverVersion: string): RolloutObservation => {
  const o = RolloutObservationSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  o.run.cluster.serverVersion = serverVersion;
  return o;
};
const rulesHanded = () => vi.mocked(predictOldPod).mock.calls.map(([input]) => input.rules);

beforeEach(() => {
  vi.mocked(predictOldPod).mockClear();
});

describe("a rollout is predicted with the kubelet's rules of its cluster's minor", () => {
  it("a rollout on 1.35 is predicted with 1.35's rules, not the newest minor's", () => {
    expect(NEWEST_MINOR).not.toBe('1.35');
    const r = gradeRollout(load('v1.35.4'));
    // Each old pod and the template's own prediction: four calls, each with 1.35's rules.
    expect(rulesHanded()).toHaveLength(4);
    for (const rules of rulesHanded()) expect(rules).toBe(RULES_BY_MINOR.get('1.35'));
    expect(r.rollout!.rules).toEqual({ minor: '1.35', source: 'k8s.io/kubernetes v1.35.4' });
    expect(r.rollout!.steps[0]).toBe("the kubelet's rules of Kubernetes 1.35 (k8s.io/kubernetes v1.35.4)");
    expect(r.notes).toEqual([]);
  });

  it("the recording, made on the real node's 1.34.4, is predicted with 1.34's rules", () => {
    const r = gradeRollout(load('v1.34.4'));
    for (const rules of rulesHanded()) expect(rules).toBe(RULES_BY_MINOR.get('1.34'));
    expect(r.rollout!.rules).toEqual({ minor: '1.34', source: 'k8s.io/kubernetes v1.34.4' });
    expect(r.verdict).toBe('matches-model');
  });

  it('a minor the model does not know is predicted with the newest rules, and the grade says so', () => {
    const r = gradeRollout(load('v1.99.0'));
    for (const rules of rulesHanded()) expect(rules).toBe(RULES_BY_MINOR.get(NEWEST_MINOR));
    expect(r.rollout!.rules.minor).toBe(NEWEST_MINOR);
    expect(r.notes).toEqual([expect.stringMatching(/1\.99 is newer than the model knows/)]);
  });

  it('an old pod is predicted with the minimum grace of the rules it is given', () => {
    // No hook, grace 1 s, work 2.5 s: cut by SIGKILL after a 2 s remainder, not after a 3 s one.
    const input = { mode: 'graceful', lifecycle: null, graceSeconds: 1, workMs: 2500 };
    const rules = RULES_BY_MINOR.get('1.35')!;
    expect(predictOldPod({ ...input, rules }).failures).toBe('expected');
    expect(predictOldPod({ ...input, rules: { ...rules, minimumGracePeriodSeconds: 3 } }).failures).toBe('possible');
  });
});
