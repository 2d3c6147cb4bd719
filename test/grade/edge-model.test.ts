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
        'refused after TERM': 'possible',
        'cut at the pod': 'none',
      });
  });

  it("a sleep within the lag's range (throttle, then Traefik's processing) may or may not outlast it; past it, none", () => {
    const lagExposure = (seconds: number) =>
      predictEdge(edgeModelInput(edgeScenario({ ...SETUPS.c, preStopSeconds: seconds }), rules)).expectations[0]!
        .exposure;
    expect([1, 1.5, 3, 4.6, 4.7, 5].map(lagExposure)).toEqual([
      'expected',
      'possible',
      'possible',
      'possible',
      'none',
      'none',
    ]);
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
      'refused after TERM': 'none',
      'cut at the pod': 'none',
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

/** (setup) with one request the pod refused (503, draining) on a connection the edge sent on before the slice dropped it. */
function withDrainingRefusal(o: ReturnType<typeof edgeObservation>) {
  const lines = o.evidence.loadLog!.lines;
  const changed = Date.parse(o.timeline.templateChanged!.wall);
  const failedAt = lines.findIndex((l) => l.text.includes('"http-error"'));
  // A failed request if any, else one answered during the rollout.
  const i =
    failedAt >= 0
      ? failedAt
      : lines.findIndex((l) => l.text.includes('"completed"') && Date.parse(JSON.parse(l.text).sent.time) > changed);
  const record = JSON.parse(lines[i]!.text);
  const access = o.edge.accessLogs[0]!.lines;
  const j = access.findIndex((l) => JSON.parse(l.text)['request_X-Termlab-Request'] === record.id);
  const line = JSON.parse(access[j]!.text);
  // Sent as the rollout began, before any EndpointSlice change: the edge could not have known.
  line.StartUTC = o.timeline.templateChanged!.wall;
  line.DownstreamStatus = 503;
  line.OriginStatus = 503;
  access[j] = { ...access[j]!, text: JSON.stringify(line) };
  lines[i] = { ...lines[i]!, text: JSON.stringify({ ...record, outcome: 'rejected', status: 503 }) };
  const end = lines.findIndex((l) => l.text.includes('"load-end"'));
  const tally = JSON.parse(lines[end]!.text);
  const wasCompleted = record.outcome === 'completed';
  lines[end] = {
    ...lines[end]!,
    text: JSON.stringify({
      ...tally,
      rejected: tally.rejected + 1,
      completed: tally.completed - (wasCompleted ? 1 : 0),
      failed: tally.failed + (wasCompleted ? 1 : 0),
    }),
  };
  return o;
}

describe('a request the pod refused after its TERM, the edge not yet told', () => {
  it('is the lag window\'s own (allowed with no preStop), not a failure "at the pod" the model rules out', () => {
    const r = gradeEdge(withDrainingRefusal(edgeObservation(SETUPS.a)));
    expect(r.edge!.causes['draining (503)']).toBe(1);
    expect(check(r, 'edge.model.refused-after-TERM')).toMatchObject({ status: 'pass' });
    expect(check(r, 'edge.model.cut-at-the-pod')).toMatchObject({ status: 'pass' });
    expect(r.verdict).toBe('matches-model');
  });

  it('differs where the sleep outlasts the lag: nothing should reach the pod after its TERM', () => {
    const r = gradeEdge(withDrainingRefusal(edgeObservation(SETUPS.c, { dropFailures: true })));
    expect(check(r, 'edge.model.refused-after-TERM')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/but 1 were seen/),
    });
  });
});
