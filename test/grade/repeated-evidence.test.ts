// Checks whose cost was cut (watch-consistent compares content only where a resourceVersion repeats;
// the harness span counts an object's keys without listing them): what each catches, and what it lets be.
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { buildObservation } from '../support/observations.ts';

const check = (o: Observation, id: string) => grade(o).checks.find((c) => c.id === id)!;

describe('evidence.watch-consistent: one resourceVersion, one content', () => {
  it('passes a watch event delivered twice with the same content', () => {
    const o = buildObservation();
    const first = o.evidence.watchEvents[0]!;
    // Delivered again a millisecond later: the arrival is no part of the content.
    o.evidence.watchEvents.splice(1, 0, {
      ...structuredClone(first),
      receivedAt: {
        mono: first.receivedAt.mono + 1,
        wall: new Date(Date.parse(first.receivedAt.wall) + 1).toISOString(),
      },
    });
    expect(check(o, 'evidence.watch-consistent')).toMatchObject({ status: 'pass' });
  });

  it('fails two watch events of one resourceVersion whose content differs, naming it', () => {
    const o = buildObservation();
    const first = o.evidence.watchEvents[0]!;
    o.evidence.watchEvents.splice(1, 0, { ...structuredClone(first), phase: 'Failed' });
    expect(check(o, 'evidence.watch-consistent')).toMatchObject({
      status: 'fail',
      reason: `two watch events carry resourceVersion ${first.resourceVersion} with different content`,
    });
  });

  it('compares with the latest event of that resourceVersion, an ERROR event included', () => {
    const o = buildObservation();
    const first = o.evidence.watchEvents[0]!;
    const error = {
      ...structuredClone(first),
      type: 'ERROR' as const,
      uid: null,
      phase: null,
      containers: [],
      deletionTimestamp: null,
      deletionGracePeriodSeconds: null,
    };
    // An ERROR may differ; the event after it is compared with the ERROR, not with the first.
    o.evidence.watchEvents.splice(1, 0, error, structuredClone(first));
    expect(check(o, 'evidence.watch-consistent')).toMatchObject({
      status: 'fail',
      reason: `two watch events carry resourceVersion ${first.resourceVersion} with different content`,
    });
  });
});

describe("evidence.clock-monotonic: every { mono, wall } pair is on the run's one clock", () => {
  it('fails a pair whose wall is moved, naming it', () => {
    const o = buildObservation();
    o.timeline.requestSent!.at.wall = new Date(Date.parse(o.timeline.requestSent!.at.wall) + 5_000).toISOString();
    expect(check(o, 'evidence.clock-monotonic')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining(`the harness time ${o.timeline.requestSent!.at.mono} ms`),
    });
  });

  it('names the moved pair when its wall was moved earlier, too', () => {
    const o = buildObservation();
    o.timeline.requestSent!.at.wall = '2020-01-01T00:00:00.000Z';
    expect(check(o, 'evidence.clock-monotonic')).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining(
        `the harness time ${o.timeline.requestSent!.at.mono} ms (2020-01-01T00:00:00.000Z)`,
      ),
    });
  });

  it('takes an object with a third key for no harness time', () => {
    const o = buildObservation();
    const at = o.timeline.requestSent!.at as { mono: number; wall: string; note?: string };
    at.wall = new Date(Date.parse(at.wall) + 5_000).toISOString();
    at.note = 'not a harness time: three keys';
    expect(check(o, 'evidence.clock-monotonic').reason).not.toContain(`the harness time ${at.mono} ms`);
  });
});
