// The runner's assembly of the observation: the final state from a pod read when the watch missed
// it, cited as a read; and "evidence lost" when the pod is gone and no end was ever seen.
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { ObservationSchema, type PodRead } from '../../harness/observation/schema.ts';
import { buildObservation as assemble, type Recorded } from '../../harness/run/observe.ts';
import { newRequestRecord } from '../../harness/run/request.ts';
import { buildObservation } from '../support/observations.ts';

function recorded(podReads: PodRead[]): Recorded {
  const o = buildObservation();
  const request = {
    ...newRequestRecord('req-1'),
    sent: o.timeline.requestSent!.at,
    accepted: o.timeline.requestAccepted!.at,
    ended: o.timeline.requestEnded!.at,
    status: 200,
    bytes: 1234,
    podUid: o.pod!.uid,
    outcome: 'cut' as const,
    errorCode: 'UND_ERR_SOCKET',
  };
  return {
    run: o.run,
    scenario: o.scenario,
    pod: o.pod,
    podReady: o.timeline.podReady!.at,
    watchEstablished: o.timeline.watchEstablished!.at,
    deleteIssued: o.timeline.deleteIssued!.at,
    deleteAck: { ...o.timeline.deleteAcknowledged! },
    request,
    watch: null,
    logs: null,
    podEvents: [],
    podReads,
    cleanup: [],
    portForwardErrors: [],
    transport: [],
  };
}
const read = (overrides: Partial<PodRead>): PodRead => ({
  reason: 'final',
  at: { mono: 9000, wall: '2026-11-30T10:00:09.000Z' },
  found: true,
  resourceVersion: '120',
  uid: 'uid-0001',
  phase: 'Failed',
  deletionTimestamp: '2026-11-30T10:00:07Z',
  deletionGracePeriodSeconds: 5,
  finalizers: [],
  containers: [{ name: 'lab', state: 'terminated', exitCode: 137, reason: 'Error' }],
  ...overrides,
});

describe('building the observation', () => {
  it('takes the final state from the last pod read of this pod when no watch event shows it, cited as a read', () => {
    const o = assemble(
      recorded([
        read({ resourceVersion: '118' }),
        read({
          uid: 'a-replacement',
          resourceVersion: '119',
          containers: [{ name: 'lab', state: 'terminated', exitCode: 0, reason: 'Completed' }],
        }),
      ]),
    );
    expect(ObservationSchema.parse(o).schemaVersion).toBe(7);
    expect(o.finalState).toMatchObject({
      exitCode: 137,
      container: 'lab',
      from: { kind: 'read', index: 0, resourceVersion: '118' },
    });
    expect(o.timeline.containerTerminated).toMatchObject({ from: { kind: 'read', index: 0 } });
    expect(grade(o).checks.find((c) => c.id === 'evidence.terminated-observed')).toMatchObject({
      status: 'pass',
      reason: expect.stringContaining('pod read 0'),
    });
  });

  it('says "evidence lost" when the pod is gone and no final state was seen', () => {
    const o = assemble(
      recorded([read({ found: false, uid: null, resourceVersion: null, containers: [], phase: null })]),
    );
    expect(o.finalState).toBeNull();
    expect(o.timeline.podDeleted).toMatchObject({ from: { kind: 'read', index: 0 } });
    const check = grade(o).checks.find((c) => c.id === 'evidence.terminated-observed');
    expect(check).toMatchObject({ status: 'inconclusive', reason: expect.stringMatching(/^evidence lost/) });
  });

  it('grades a run whose pod vanished before any end was seen as inconclusive, evidence lost', () => {
    const o = buildObservation();
    const first = o.evidence.watchEvents[0]!.receivedAt;
    // On the run's one clock, and before the run was observed.
    const deleted = { mono: first.mono + 500, wall: new Date(Date.parse(first.wall) + 500).toISOString() };
    o.finalState = null;
    o.timeline.containerTerminated = null;
    o.evidence.watchEvents = [
      o.evidence.watchEvents[0]!,
      { ...o.evidence.watchEvents[0]!, type: 'DELETED', resourceVersion: '130', receivedAt: deleted },
    ];
    o.timeline.podDeleted = { at: deleted, from: { kind: 'watch', type: 'DELETED', resourceVersion: '130' } };
    expect(grade(o)).toMatchObject({
      verdict: 'inconclusive',
      explanation: expect.stringMatching(/^evidence lost: the pod is gone/),
    });
  });
});
