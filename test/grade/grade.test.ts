import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { gradeFile } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import { gradePairs } from '../../harness/grade/pairs.ts';
import { parsePredictions } from '../../harness/grade/predictions.ts';
import { BASE_SCENARIO, buildObservation, exampleObservations } from '../support/observations.ts';

const statusOf = (o: ReturnType<typeof buildObservation>, id: string) => grade(o).checks.find((c) => c.id === id);

describe('grader', () => {
  it('grades every example as its outcome deserves', () => {
    const verdicts = Object.fromEntries(Object.entries(exampleObservations()).map(([n, o]) => [n, grade(o).verdict]));
    expect(verdicts).toEqual({
      'completed-0': 'matches-model',
      'cut-137-after-grace': 'matches-model',
      'cut-17-immediate': 'matches-model',
      'rejected-503': 'differs-from-model',
      'oom-137': 'differs-from-model',
      'evidence-invalid': 'evidence-invalid',
    });
  });

  it('puts rubric and grader versions in every result', () => {
    const r = grade(buildObservation());
    expect(r.rubricVersion).toBe('termlab-rubric/2');
    expect(r.graderVersion).toMatch(/^\d+\.\d+\.\d+/);
  });

  describe('evidence', () => {
    it('fails a watch started after the request', () => {
      const o = buildObservation();
      o.timeline.watchEstablished = {
        at: { ...o.timeline.requestSent!.at, mono: o.timeline.requestSent!.at.mono + 1 },
      };
      expect(statusOf(o, 'evidence.watch-before-request')?.status).toBe('fail');
      expect(grade(o).verdict).toBe('evidence-invalid');
    });
    it('fails a replacement pod in the watch events', () => {
      const o = buildObservation();
      o.evidence.watchEvents[1]!.uid = 'uid-other';
      expect(statusOf(o, 'evidence.single-pod-uid')).toMatchObject({
        status: 'fail',
        reason: expect.stringContaining('uid-other'),
      });
    });
    it('fails log lines from another pod', () => {
      const o = buildObservation();
      o.evidence.logLines[0]!.text = JSON.stringify({ event: 'listening', podUid: 'uid-x' });
      expect(statusOf(o, 'evidence.single-pod-uid')?.status).toBe('fail');
    });
    it('fails a lifecycle read after the delete, or one that differs from the scenario', () => {
      const late = buildObservation();
      late.pod!.capturedAt = { ...late.timeline.deleteIssued!.at, mono: late.timeline.deleteIssued!.at.mono + 5 };
      expect(statusOf(late, 'evidence.live-lifecycle')?.status).toBe('fail');
      const noHook = buildObservation();
      noHook.pod!.containers[0]!.lifecycle = null;
      expect(statusOf(noHook, 'evidence.live-lifecycle')?.reason).toContain('lacks');
    });
    it('fails a delete issued before the acceptance', () => {
      const o = buildObservation();
      o.timeline.requestAccepted = {
        at: { ...o.timeline.deleteIssued!.at, mono: o.timeline.deleteIssued!.at.mono + 1 },
      };
      expect(statusOf(o, 'evidence.accepted-before-delete')?.status).toBe('fail');
    });
    it('fails a final state that no watch event shows', () => {
      const o = buildObservation();
      o.finalState!.from = { kind: 'watch', type: 'MODIFIED', resourceVersion: '999' };
      expect(statusOf(o, 'evidence.terminated-observed')?.reason).toContain('999');
      o.finalState = null;
      expect(statusOf(o, 'evidence.terminated-observed')?.status).toBe('fail');
    });
    it('fails a harness clock that runs backwards', () => {
      const o = buildObservation();
      o.evidence.watchEvents[2]!.receivedAt.mono = 1;
      expect(statusOf(o, 'evidence.clock-monotonic')?.status).toBe('fail');
    });
  });

  describe('outcome and attribution', () => {
    it('explains 137 by the grace only with TERM seen and timing that fits', () => {
      const ok = statusOf(buildObservation(), 'attribution.exit-code');
      expect(ok).toMatchObject({ status: 'pass', reason: expect.stringContaining('grace period ran out') });
    });
    it('never concludes grace from 137 alone', () => {
      const o = buildObservation();
      // No TERM or hook in the evidence, and so none on the timeline (the grader derives it from the log).
      o.evidence.logLines = o.evidence.logLines.filter((l) => !/"event":"(signal|hook-start|hook-end)"/.test(l.text));
      o.timeline.termReceived = null;
      o.timeline.hookStart = null;
      o.timeline.hookEnd = null;
      expect(statusOf(o, 'attribution.exit-code')).toMatchObject({
        status: 'inconclusive',
        reason: expect.stringContaining('137 not explained'),
      });
    });
    it('does not attribute a 137 that came long before the grace ran out', () => {
      const o = buildObservation(BASE_SCENARIO, { exitAt: 0.4 });
      expect(statusOf(o, 'attribution.exit-code')).toMatchObject({
        status: 'inconclusive',
        reason: expect.stringContaining('window'),
      });
    });
    it('does not grade sub-second timing: a kill 1.5s late still matches', () => {
      expect(grade(buildObservation(BASE_SCENARIO, { exitAt: 6.5 })).verdict).toBe('matches-model');
    });
    it('fails a cut request the model says completes', () => {
      const o = buildObservation(
        { ...BASE_SCENARIO, terminationGracePeriodSeconds: 30 },
        { outcome: 'cut', exitCode: 137, exitAt: 30 },
      );
      expect(grade(o).verdict).toBe('differs-from-model');
    });
    it('calls a port-forward failure inconclusive, not a cut', () => {
      const o = buildObservation();
      o.request = { ...o.request, outcome: 'transport-failed', errorCode: 'PORTFORWARD_CLOSED' };
      expect(statusOf(o, 'outcome.request')?.status).toBe('inconclusive');
    });
    it('marks an incomplete run inconclusive', () => {
      const o = buildObservation();
      o.run.complete = false;
      o.run.incompleteReason = 'interrupted by Ctrl-C';
      expect(grade(o)).toMatchObject({ verdict: 'inconclusive', explanation: expect.stringContaining('Ctrl-C') });
    });
  });

  describe('predictions', () => {
    const file = parsePredictions('predictions:\n  short-grace: { outcome: completed, exitCode: 0 }\n', 'p.yaml');
    it('grades a prediction against the observation and the model', () => {
      const checks = grade(buildObservation(), { predictions: file }).checks.filter((c) =>
        c.id.startsWith('prediction.'),
      );
      expect(checks.map((c) => [c.id, c.status])).toEqual([
        ['prediction.vs-observation', 'fail'],
        ['prediction.vs-model', 'fail'],
      ]);
      expect(checks[1]!.reason).toContain('cut/137');
    });
    it('says when a scenario has no prediction', () => {
      const checks = grade(buildObservation({ ...BASE_SCENARIO, name: 'other' }), { predictions: file }).checks;
      expect(checks.at(-1)).toMatchObject({ id: 'prediction.present', status: 'inconclusive' });
    });
    it('rejects a broken predictions file naming the field', () => {
      expect(() => parsePredictions('predictions:\n  a: { outcome: maybe, exitCode: 0 }\n', 'p.yaml')).toThrow(
        /p\.yaml: predictions\.a\.outcome/,
      );
      expect(() => parsePredictions('predictions: [', 'p.yaml')).toThrow(/p\.yaml: not valid YAML/);
    });
    it('refuses an unknown tag or directive naming its line, with no Node warning beside it', () => {
      const warned = vi.spyOn(process, 'emitWarning');
      try {
        expect(() => parsePredictions('predictions:\n  a: !maybe { outcome: cut, exitCode: 137 }\n', 'p.yaml')).toThrow(
          /p\.yaml: not valid YAML: line 2: Unresolved tag: !maybe/,
        );
        expect(() => parsePredictions('%z\n---\npredictions: {}\n', 'p.yaml')).toThrow(
          /p\.yaml: not valid YAML: line 1: Unknown directive %z/,
        );
        expect(warned).not.toHaveBeenCalled();
      } finally {
        warned.mockRestore();
      }
    });
  });

  describe('the lab pair', () => {
    const examples = exampleObservations();
    const short = grade(examples['cut-137-after-grace']!);
    const restored = grade(examples['completed-0']!);
    it('passes a short-grace cut and a restored-grace completion on two pods', () => {
      expect(gradePairs([short, restored])).toEqual([
        { pairId: 'grace', checks: [expect.objectContaining({ status: 'pass' })] },
      ]);
    });
    it('fails the pair when both runs claim one pod', () => {
      const [pair] = gradePairs([short, { ...restored, podUid: short.podUid }]);
      expect(pair!.checks[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('same pod UID') });
    });
    it('is inconclusive with only one half', () => {
      expect(gradePairs([short])[0]!.checks[0]!.status).toBe('inconclusive');
    });
    // Recorded: one of 40 students at once on one simulator (bench:class-run), the API stamped the delete
    // seconds late and TERM came 7.26 s after it: the work finished within the grace, as the model says for
    // that run's own times. The pair was not tested; that is no fail of the student's.
    it('is inconclusive, naming the late TERM, when the short-grace run completed only because the kubelet began late', async () => {
      const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'late-kubelet-pair');
      const results = await Promise.all(
        ['short-grace', 'restored-grace'].map((n) => gradeFile(join(dir, `${n}.observation.json`))),
      );
      expect(results[0]).toMatchObject({
        verdict: 'matches-model',
        outcome: 'completed',
        asDesigned: { outcome: 'cut' },
      });
      const [pair] = gradePairs(results);
      expect(pair!.checks[0]).toMatchObject({
        status: 'inconclusive',
        reason: expect.stringMatching(
          /^the short-grace run \(5s\) was completed, as the model predicts from that run's own times, but as written it is cut \(TERM came 7\.26s after the delete, where the design puts it at 3\.00s\): this run did not test the grace/,
        ),
      });
    });
    it('still fails a short-grace scenario that as written completes', () => {
      const tooLong = { ...examples['cut-137-after-grace']!.scenario, terminationGracePeriodSeconds: 60 };
      const r = grade(buildObservation(tooLong, undefined, 'uid-long'));
      expect(r).toMatchObject({ verdict: 'matches-model', outcome: 'completed', asDesigned: { outcome: 'completed' } });
      expect(gradePairs([r, restored])[0]!.checks[0]).toMatchObject({
        status: 'fail',
        reason: expect.stringContaining('was completed, not cut'),
      });
    });
  });
});

describe('a run stopped early', () => {
  it('is explained by the stop, before what it left unseen and before a prediction it missed', () => {
    const o = buildObservation();
    o.run.complete = false;
    o.run.incompleteReason = 'interrupted (Ctrl-C) while terminating';
    const wrong =
      o.request.outcome === 'cut'
        ? { outcome: 'completed' as const, exitCode: 0 }
        : { outcome: 'cut' as const, exitCode: 137 };
    const r = grade(o, { predictions: { predictions: { [o.scenario.name]: wrong } } });
    expect(r.checks.some((c) => c.id.startsWith('prediction.') && c.status === 'fail')).toBe(true);
    expect(r.verdict).toBe('inconclusive');
    expect(r.explanation).toBe('the run stopped before it finished: interrupted (Ctrl-C) while terminating');
  });
});
