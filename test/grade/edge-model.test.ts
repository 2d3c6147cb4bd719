// The edge model's predictions for scenarios (a)-(d), and the grade of hand-made evidence against them:
// outcomes by cause, never sub-second times.
import { describe, expect, it } from 'vitest';
import { gradeEdge } from '../../harness/grade/edge/grade.ts';
import { edgeModelInput, predictEdge } from '../../harness/grade/edge/theory.ts';
import { rulesFor } from '../../harness/grade/theory.ts';
import { edgeObservation, edgeScenario, SETUPS } from '../support/edge-observation.ts';

const rules = rulesFor('v1.37.2').rules;
const predict = (k: keyof typeof SETUPS) => predictEdge(edgeModelInput(edgeScenario(SETUPS[k]), rules));
const exposures = (k: keyof typeof SETUPS) =>
  Object.fromEntries(predict(k).expectations.map((e) => [e.cause, e.exposure]));
const check = (r: ReturnType<typeof gradeEdge>, id: string) => r.checks.find((c) => c.id === id)!;

describe('the edge model', () => {
  it('(a) no preStop and (b) a sleep shorter than the lag: failures from the edge routing to the terminating pod', () => {
    for (const k of ['a', 'b'] as const)
      expect(exposures(k)).toEqual({
        'edge-routed-to-removed-endpoint': 'expected',
        'keepalive-closed-by-app': 'possible',
        'no-endpoint-at-edge': 'none',
        'at the pod': 'none',
      });
  });

  it('(c) a sleep that outlasts the lag, polite app, GET: no failure of any cause', () => {
    expect(predict('c').failures).toBe('none');
  });

  it("(d) the same sleep, naive app, POST: no lag failure, but the app's idle timeout may race a POST, never replayed", () => {
    const p = predict('d');
    expect(exposures('d')).toEqual({
      'edge-routed-to-removed-endpoint': 'none',
      'keepalive-closed-by-app': 'possible',
      'no-endpoint-at-edge': 'none',
      'at the pod': 'none',
    });
    expect(p.expectations[1]!.why).toMatch(/POST.*not replay/);
  });
});

describe('grading edge evidence', () => {
  it('(a) matches: the failed requests are attributed to the edge still routing to the terminating pod', () => {
    const r = gradeEdge(edgeObservation(SETUPS.a));
    expect(r.verdict, JSON.stringify(r.checks.filter((c) => c.status !== 'pass'))).toBe('matches-model');
    expect(r.edge!.causes['edge-routed-to-removed-endpoint']).toBeGreaterThan(0);
    expect(check(r, 'edge.model.edge-routed-to-removed-endpoint').status).toBe('pass');
    expect(r.edge!.measuredLagSeconds).toBeGreaterThan(0);
  });

  it('(c) on the same evidence differs from the model, naming the lag failures its sleep should have prevented', () => {
    const r = gradeEdge(edgeObservation(SETUPS.c));
    expect(r.verdict).toBe('differs-from-model');
    expect(check(r, 'edge.model.edge-routed-to-removed-endpoint')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(
        /expects no requests the edge still sent to a dropped endpoint .*but \d+ were seen$/,
      ),
    });
  });

  it('(c) matches when no request failed; (a) with no failure differs, saying the lag failures it expected were not seen', () => {
    expect(gradeEdge(edgeObservation(SETUPS.c, { dropFailures: true })).verdict).toBe('matches-model');
    const a = gradeEdge(edgeObservation(SETUPS.a, { dropFailures: true }));
    expect(a.verdict).toBe('differs-from-model');
    expect(check(a, 'edge.model.edge-routed-to-removed-endpoint').reason).toMatch(/but none was seen/);
  });

  it('(d) matches with a kept-alive race before any TERM, and differs once the lag failures appear', () => {
    const raced = gradeEdge(edgeObservation(SETUPS.d, { dropFailures: true, raceBeforeTerm: 2 }));
    expect(raced.edge!.causes).toEqual({ 'keepalive-closed-by-app': 2 });
    expect(raced.verdict, JSON.stringify(raced.checks.filter((c) => c.status !== 'pass'))).toBe('matches-model');
    expect(gradeEdge(edgeObservation(SETUPS.d)).verdict).toBe('differs-from-model');
  });

  it('a failed request with no line in the edge log leaves the evidence open, not a cause invented', () => {
    const o = edgeObservation(SETUPS.a);
    o.edge.accessLogs[0]!.lines = o.edge.accessLogs[0]!.lines.filter((l) => !l.text.includes('"DownstreamStatus":502'));
    const r = gradeEdge(o);
    expect(check(r, 'evidence.edge-access-log').status).toBe('inconclusive');
    expect(r.verdict).not.toBe('matches-model');
  });
});
