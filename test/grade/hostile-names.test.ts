// Hostile input class (i) of issue 21: a name that is also a key of Object.prototype, looked up in a
// predictions file, is no prediction at all (never "you predicted undefined/undefined").
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { parsePredictions } from '../../harness/grade/predictions.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

describe('names that are keys of Object.prototype', () => {
  // Scenario names are lower-case with dashes: of Object.prototype's keys, only "constructor" fits.
  it.each(['constructor'])('a scenario named %s with no prediction of its own', (name) => {
    const predictions = parsePredictions('predictions:\n  short-grace: { outcome: cut, exitCode: 137 }\n', 'p.yaml');
    const o = buildObservation({ ...BASE_SCENARIO, name });
    const result = grade(o, { predictions });
    const checks = result.checks.filter((c) => c.id.startsWith('prediction.'));
    expect(checks).toEqual([
      { id: 'prediction.present', status: 'inconclusive', reason: `no prediction for scenario ${o.scenario.name}` },
    ]);
    expect(JSON.stringify(result)).not.toContain('undefined/undefined');
  });
});

// Class (iv): monotonic times far beyond the run's span are not believed.
describe("times beyond the run's own span", () => {
  it.each([
    [
      'a mono moved by years, its wall kept',
      (o: ReturnType<typeof buildObservation>) => {
        o.timeline.requestEnded!.at.mono += 3 * 365 * 24 * 3600 * 1000;
      },
    ],
    [
      'a mono and its wall both moved by years',
      (o: ReturnType<typeof buildObservation>) => {
        const t = o.timeline.containerTerminated!.at;
        t.mono += 3 * 365 * 24 * 3600 * 1000;
        t.wall = new Date(Date.parse(t.wall) + 3 * 365 * 24 * 3600 * 1000).toISOString();
      },
    ],
  ])('%s: evidence invalid, never a pass', (_what, edit) => {
    const o = buildObservation();
    expect(grade(o).verdict).toBe('matches-model');
    edit(o);
    const result = grade(o);
    expect(result.verdict).toBe('evidence-invalid');
    expect(result.checks.find((c) => c.id === 'evidence.clock-monotonic')?.reason).toMatch(
      /not on the run's one clock|beyond the run's own span/,
    );
  });
});

// Class (iii): a watch whose life shows a drop with no resume, yet events arrive after it.
describe('a watch life that does not account for its events', () => {
  it('a drop with no resume, relist or give-up, events after it: evidence invalid', () => {
    const o = buildObservation();
    const first = o.evidence.watchEvents[0]!;
    o.evidence.watchLifecycle.push({
      event: 'dropped',
      at: { mono: first.receivedAt.mono - 1, wall: new Date(Date.parse(first.receivedAt.wall) - 1).toISOString() },
      resourceVersion: '104',
      detail: 'ECONNRESET',
    });
    const result = grade(o);
    expect(result.verdict).toBe('evidence-invalid');
    expect(result.checks.find((c) => c.id === 'evidence.watch-life')?.reason).toMatch(
      /arrived after the watch dropped at .* and its life records no resume/,
    );
  });
});
