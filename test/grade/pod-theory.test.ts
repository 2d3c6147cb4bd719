// The pod model (harness/grade/pod-theory.ts), worked by hand from the kubelet's rules: regular
// containers together, a native sidecar after the app or when the grace runs out while it waits, each
// container's budget its grace less its hook's and its wait's whole seconds, at least 2 s.
import { describe, expect, it } from 'vitest';
import { predictScenario } from '../../harness/grade/pod-theory.ts';
import { ScenarioSchema } from '../../harness/scenario/schema.ts';

const scenario = (fields: Record<string, unknown>) =>
  ScenarioSchema.parse({
    name: 'x',
    mode: 'graceful',
    preStop: { kind: 'none' },
    terminationGracePeriodSeconds: 30,
    workMs: 10_000,
    deleteDelayMs: 1000,
    ...fields,
  });
const containers = (fields: Record<string, unknown>) => predictScenario(scenario(fields)).pod!.containers;

describe("the pod model, per container (window basis: times from the kubelet's start)", () => {
  it('a regular proxy that exits at TERM gets it with the app and cuts the work; the app, its client gone, exits 0', () => {
    const p = predictScenario(scenario({ sidecar: { native: false, onTerm: 'exit' } }));
    expect(p).toMatchObject({ outcome: 'cut', exitCode: 0, pod: { cutBy: 'proxy' } });
    expect(p.podStatus.phase).toBe('Failed');
    expect(p.pod!.containers.map((c) => [c.name, c.termAt, c.exitAt, c.exitCode])).toEqual([
      ['lab', 0, 0, 0],
      ['proxy', 0, 0, 17],
    ]);
  });

  it('the same proxy as a native sidecar waits for the app: TERM at its exit, budget 30 - 9 whole seconds', () => {
    const p = predictScenario(scenario({ sidecar: { native: true, onTerm: 'exit' } }));
    expect(p).toMatchObject({ outcome: 'completed', exitCode: 0, pod: { cutBy: null } });
    expect(p.podStatus.phase).toBe('Succeeded');
    expect(p.pod!.containers[1]).toMatchObject({
      termAt: 9,
      turnWaitSeconds: 9,
      turnByTimer: false,
      stopGraceSeconds: 21,
      exitCode: 17,
    });
  });

  it('the wait counts in whole seconds: an app gone at 9.6 s leaves the sidecar 30 - 9 = 21 s', () => {
    expect(containers({ workMs: 10_600, sidecar: { native: true, onTerm: 'drain' } })[1]).toMatchObject({
      termAt: 9.6,
      stopGraceSeconds: 21,
      exitCode: 0,
    });
  });

  it("a grace used up by the app's hook: the sidecar's turn comes by the timer, with the 2 s minimum", () => {
    const [app, proxy] = containers({
      preStop: { kind: 'exec-sleep', seconds: 4 },
      terminationGracePeriodSeconds: 5,
      sidecar: { native: true, onTerm: 'drain' },
    });
    expect(app).toMatchObject({ termAt: 4, killAt: 6, exitCode: 137 });
    expect(proxy).toMatchObject({
      termAt: 5,
      turnByTimer: true,
      stopGraceSeconds: 2,
      killAt: 7,
      exitAt: 6,
      exitCode: 0,
    });
  });

  it("the sidecar's own preStop runs at once, beside the app's, and its seconds come off its grace before the wait", () => {
    const [app, proxy] = containers({
      preStop: { kind: 'exec-sleep', seconds: 3 },
      sidecar: { native: true, onTerm: 'drain', preStop: { kind: 'exec-sleep', seconds: 2 } },
    });
    expect(app).toMatchObject({ hookEndsAt: 3, termAt: 3, exitAt: 9 });
    expect(proxy).toMatchObject({ hookEndsAt: 2, termAt: 9, turnWaitSeconds: 7, stopGraceSeconds: 21 });
  });

  it("a regular proxy that drains holds the request until the app's answer ends: completed, both exit 0", () => {
    const p = predictScenario(scenario({ sidecar: { native: false, onTerm: 'drain' } }));
    expect(p).toMatchObject({ outcome: 'completed', exitCode: 0 });
    expect(p.pod!.containers[1]).toMatchObject({ termAt: 0, exitAt: 9, exitCode: 0 });
  });
});

describe('the pod model on observed times: only a decision that could flip counts against the margin', () => {
  // sidecar-native-short-grace on the simulator (2026-12-03): the kubelet began 1.91 s after the delete, the app's
  // hook 4 s, so its TERM at 5.92 s and its kill at 7.92 s; the sidecar's turn by the timer at 6.92 s, its kill at
  // 8.92 s, 0.08 s before the work's end at 9 s. The app's kill cut the request a second before: nothing to call.
  const shortGrace = scenario({
    preStop: { kind: 'exec-sleep', seconds: 4 },
    terminationGracePeriodSeconds: 5,
    sidecar: { native: true, onTerm: 'drain' },
  });
  const observed = (termAt: number) => ({
    termAt,
    startNotBefore: termAt - 4.01,
    startNotAfter: termAt - 4,
    hookRequestStartAt: null,
  });

  it("a proxy killed after the app died cuts nothing, however near its kill is to the work's end", () => {
    const p = predictScenario(shortGrace, null, undefined, observed(5.92));
    expect(p).toMatchObject({ outcome: 'cut', exitCode: 137 });
    expect(p.pod!.containers[1]).toMatchObject({ killAt: expect.closeTo(8.92, 2), exitCode: 0 });
    expect(p.marginSeconds).toBeGreaterThan(0.9);
  });

  it("a proxy whose kill could come before the app's own end keeps its distance to the work's end as the margin", () => {
    // A regular proxy that drains: killed with the app at its own budget, 0.05 s before the work would end.
    const p = predictScenario(
      scenario({ terminationGracePeriodSeconds: 7, sidecar: { native: false, onTerm: 'drain' } }),
      null,
      undefined,
      { termAt: 1.95, startNotBefore: 1.9, startNotAfter: null, hookRequestStartAt: null },
    );
    expect(p.marginSeconds).toBeLessThan(0.1);
  });
});
