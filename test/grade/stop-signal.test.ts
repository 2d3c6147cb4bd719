// KEP-4960 in the model and the grader: a server that drains only on SIGQUIT (nginx's graceful stop) is cut
// when the kubelet sends SIGTERM, and completes when lifecycle.stopSignal SIGQUIT reaches it; whether it reaches
// it is what the cluster did with the field (the live pod), or before any run the minor's gate default.
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import { stopSignalByDefault, stopSignalFromLivePod } from '../../harness/grade/stop-signal.ts';
import { predict, RULES_BY_MINOR } from '../../harness/grade/theory.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { buildObservation } from '../support/observations.ts';

const termDefault: Scenario = {
  name: 'term-default',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 15,
  workMs: 6000,
  deleteDelayMs: 1000,
  drainSignal: 'SIGQUIT',
};
const quitStopSignal: Scenario = { ...termDefault, name: 'quit-stop-signal', stopSignal: 'SIGQUIT' };
const rules137 = RULES_BY_MINOR.get('1.37')!;
const checkOf = (r: ReturnType<typeof grade>, id: string) => r.checks.find((c) => c.id === id);

describe('the model', () => {
  it('a server draining only on SIGQUIT, sent the default SIGTERM: leaves at once, 17, the request cut', () => {
    const p = predict(termDefault, null, rules137);
    expect(p).toMatchObject({ outcome: 'cut', exitCode: 17, reason: 'Error', termAt: 0 });
    expect(p.stopSignal).toBeUndefined();
    expect(p.steps.at(-1)).toBe('the server drains only on SIGQUIT: on SIGTERM it leaves at once, exit 17');
  });

  it('stopSignal SIGQUIT kept by the cluster: SIGQUIT at StopContainer, the server drains, exit 0', () => {
    const kept = stopSignalFromLivePod(quitStopSignal, { stopSignal: 'SIGQUIT' }, rules137);
    const p = predict(quitStopSignal, null, rules137, null, undefined, kept);
    expect(p).toMatchObject({ outcome: 'completed', exitCode: 0, reason: 'Completed' });
    expect(p.stopSignal).toMatchObject({ sent: 'SIGQUIT', delivered: true, basis: 'live-pod' });
    expect(p.steps).toContain('SIGQUIT at 0s, SIGKILL at 15s');
  });

  it('stopSignal dropped by the cluster: SIGTERM ran instead, and the model says so', () => {
    const dropped = stopSignalFromLivePod(quitStopSignal, null, rules137)!;
    expect(dropped.note).toBe(
      'lifecycle.stopSignal was dropped by this cluster: the ContainerStopSignals gate is off (alpha in 1.37); SIGTERM ran instead of SIGQUIT',
    );
    const p = predict(quitStopSignal, null, rules137, null, undefined, dropped);
    expect(p).toMatchObject({ outcome: 'cut', exitCode: 17 });
    expect(p.steps).toContain(dropped.note);
  });

  it('before any run: the minor gate default, said as an assumption (off in every minor the model knows)', () => {
    const p = predict(quitStopSignal);
    expect(p).toMatchObject({ outcome: 'cut', exitCode: 17 });
    expect(p.stopSignal).toMatchObject({ delivered: false, basis: 'gate-default' });
    expect(p.steps[0]).toMatch(
      /^assumed dropped: ContainerStopSignals is alpha in 1\.38, off by default, so the API server drops lifecycle\.stopSignal and SIGTERM runs; a cluster with the gate on \(termlab sim --feature-gates ContainerStopSignals=true\) sends SIGQUIT$/,
    );
    // A minor whose default were on would be assumed kept.
    const on = { ...rules137, containerStopSignals: { enabled: true, stage: 'beta' as const } };
    expect(stopSignalByDefault(quitStopSignal, on)).toMatchObject({ delivered: true, sent: 'SIGQUIT' });
    expect(predict(quitStopSignal, null, on)).toMatchObject({ outcome: 'completed', exitCode: 0 });
  });

  it('not enough grace: SIGQUIT delivered, the drain outlasts it, SIGKILL: 137', () => {
    const short = { ...quitStopSignal, terminationGracePeriodSeconds: 2 };
    const kept = stopSignalFromLivePod(short, { stopSignal: 'SIGQUIT' }, rules137);
    expect(predict(short, null, rules137, null, undefined, kept)).toMatchObject({ outcome: 'cut', exitCode: 137 });
  });
});

describe('the grader, from the live pod', () => {
  it('kept: graded completed, and the verdict says SIGQUIT ran', () => {
    const r = grade(buildObservation(quitStopSignal, { stopSignalKept: true }));
    expect(r).toMatchObject({ verdict: 'matches-model', outcome: 'completed', exitCode: 0 });
    expect(checkOf(r, 'attribution.stop-signal')).toMatchObject({ status: 'pass' });
    expect(r.explanation).toMatch(/lifecycle\.stopSignal SIGQUIT was kept by this cluster .*the server got SIGQUIT/);
    expect(r.notes.join('\n')).not.toMatch(/stopSignal/);
  });

  it('dropped: graded cut/17 as the model says, the verdict and the notes naming the gate and SIGTERM', () => {
    const r = grade(buildObservation(quitStopSignal));
    expect(r).toMatchObject({ verdict: 'matches-model', outcome: 'cut', exitCode: 17 });
    const note =
      'lifecycle.stopSignal was dropped by this cluster: the ContainerStopSignals gate is off (alpha in 1.34); SIGTERM ran instead of SIGQUIT';
    expect(r.explanation).toContain(note);
    expect(r.notes).toContain(note);
    // Exit 17 from a server that drains on QUIT is its fast stop, not the lab's immediate mode.
    expect(checkOf(r, 'attribution.exit-code')?.reason).toBe(
      'exit 17 is the lab server leaving at once on TERM (it drains only on SIGQUIT)',
    );
  });

  it('kept on the pod but the server got SIGTERM: the kubelet or the runtime did not pass it', () => {
    const o = buildObservation(quitStopSignal, { stopSignalKept: true });
    for (const l of o.evidence.logLines) l.text = l.text.replace('"signal":"SIGQUIT"', '"signal":"SIGTERM"');
    expect(checkOf(grade(o), 'attribution.stop-signal')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(
        /kept lifecycle\.stopSignal SIGQUIT, but the server got SIGTERM .*kubelet's own ContainerStopSignals gate is off, or the runtime did not pass the signal \(containerd #11617\)/,
      ),
    });
  });

  it('no stopSignal asked: no stop-signal check and no note', () => {
    const r = grade(buildObservation(termDefault));
    expect(r).toMatchObject({ verdict: 'matches-model', outcome: 'cut', exitCode: 17 });
    expect(checkOf(r, 'attribution.stop-signal')).toBeUndefined();
  });
});

describe('the stop-signal pair', () => {
  const halves = (kept: boolean) => {
    const term = { ...termDefault, labPair: { id: 'stop-signal', role: 'term-default' as const } };
    const quit = { ...quitStopSignal, labPair: { id: 'stop-signal', role: 'quit-stop-signal' as const } };
    return [
      grade(buildObservation(term, {}, 'uid-term'), { source: 'run/term-default.observation.json' }),
      grade(buildObservation(quit, { stopSignalKept: kept }, 'uid-quit'), {
        source: 'run/quit-stop-signal.observation.json',
      }),
    ];
  };

  it('passes when SIGTERM cut the work (17) and the kept SIGQUIT let it complete, on two pods', () => {
    const [pair] = gradePairs(halves(true));
    expect(pair!.checks).toEqual([
      {
        id: 'pair.stop-signal',
        status: 'pass',
        reason:
          'the same 6s of work on a server that drains only on SIGQUIT was cut when the kubelet sent SIGTERM (exit 17) and completed when lifecycle.stopSignal SIGQUIT reached it, on two pods',
      },
    ]);
  });

  it('is inconclusive, naming the dropped field and how to turn the gate on, when the cluster dropped the stopSignal', () => {
    const [pair] = gradePairs(halves(false));
    expect(pair!.checks[0]).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(
        /^the quit-stop-signal run tested no stop signal: lifecycle\.stopSignal was dropped by this cluster: the ContainerStopSignals gate is off \(alpha in 1\.34\); SIGTERM ran instead of SIGQUIT; run it where the gate is on \(termlab run --sim --feature-gates ContainerStopSignals=true/,
      ),
    });
  });

  it('fails when the halves did not do what the lesson says', () => {
    const [term, quit] = halves(true);
    const [pair] = gradePairs([{ ...term!, outcome: 'completed', exitCode: 0 }, quit!]);
    expect(pair!.checks[0]).toMatchObject({
      status: 'fail',
      reason: 'the term-default run was completed with exit 0, not cut with 17',
    });
  });
});
