// A run's summary times the kubelet's part of the pod's end from the observation's own records: the container seen
// ended → its log stream's end (the kubelet's removal), and the harness's release of its finalizer → DELETED.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../dev/fidelity/summary.ts';
import type { HarnessTime, Observation } from '../../harness/observation/schema.ts';
import { BASE_SCENARIO, buildObservation } from '../support/observations.ts';

const later = (time: HarnessTime, ms: number): HarnessTime => ({
  mono: time.mono + ms,
  wall: new Date(Date.parse(time.wall) + ms).toISOString(),
});

function withStreamEnd(afterEndedMs: number | null): Observation {
  const o = buildObservation({ ...BASE_SCENARIO, name: 'no-prestop', preStop: { kind: 'none' } });
  const ended = o.timeline.containerTerminated!.at;
  return {
    ...o,
    evidence: { ...o.evidence, logStreamEnded: afterEndedMs === null ? null : later(ended, afterEndedMs) },
  };
}

describe('a fidelity run summary', () => {
  it("times the container's removal from its end, and DELETED from the harness's release, apart from the round trips between", () => {
    const o = withStreamEnd(420);
    const released = o.cleanup.find((c) => c.action.startsWith('remove finalizer'))!.at;
    const s = summarize(o, 1, null);
    expect(s.offsets.endedToLogEnd).toBe(0.42);
    expect(s.offsets.releasedToDeleted).toBe(
      (Date.parse(o.timeline.podDeleted!.at.wall) - Date.parse(released.wall)) / 1000,
    );
  });

  it('has no removal time for a stream that did not end by itself, nor a release for a removal that failed', () => {
    const o = withStreamEnd(null);
    const failed = { ...o, cleanup: o.cleanup.map((c) => ({ ...c, ok: false, error: 'the API was unreachable' })) };
    expect(summarize(failed, 1, null).offsets).toMatchObject({ endedToLogEnd: null, releasedToDeleted: null });
    // An older file has no stream end at all.
    const { logStreamEnded: _, ...evidence } = o.evidence;
    expect(summarize({ ...o, evidence }, 1, null).offsets.endedToLogEnd).toBeNull();
  });

  it("times a sidecar's TERM and end from its own log and the watch (the v1.37.2 node's recordings)", () => {
    const recorded = (name: string): Observation =>
      JSON.parse(
        readFileSync(new URL(`../grade/fixtures/sidecar/node/${name}.observation.json`, import.meta.url), 'utf8'),
      );
    const regular = summarize(recorded('sidecar-regular-proxy'), 1, null);
    expect(regular.sidecar).toEqual({ native: false, exitCode: 17, reason: 'Error' });
    // The proxy's TERM with the app's; the app, its connection gone with the proxy, did not complete the request.
    expect(regular.offsets.reactionToSidecarTerm).toBe(0.005);
    expect(regular.workCompleted).toBe(false);
    const native = summarize(recorded('sidecar-native-proxy'), 1, null);
    expect(native.sidecar).toEqual({ native: true, exitCode: 17, reason: 'Error' });
    expect(native.workCompleted).toBe(true);
    // After the app's end: 9 s of work after the delete.
    expect(native.offsets.sidecarTerm).toBeGreaterThan(9);
    expect(summarize(withStreamEnd(100), 1, null).sidecar).toBeNull();
  });

  it("names a retry scenario's attempts and the effects the ledger's own lines count (the v1.37.2 node's recordings)", () => {
    const recorded = (name: string): Observation =>
      JSON.parse(
        readFileSync(new URL(`../grade/fixtures/retries/node/${name}.observation.json`, import.meta.url), 'utf8'),
      );
    expect(summarize(recorded('retry-doubles-effect'), 1, null).retries).toEqual({
      attempts: 'deleted cut → standby completed',
      effects: '2 applied, 0 already applied',
    });
    expect(summarize(recorded('retry-with-key'), 1, null).retries).toEqual({
      attempts: 'deleted cut → standby completed',
      effects: '1 applied, 1 already applied',
    });
    expect(summarize(recorded('retry-after-graceful'), 1, null).retries).toEqual({
      attempts: 'deleted completed',
      effects: '1 applied, 0 already applied',
    });
    // Counted from the ledger's lines, not from the file's count: a line gone is an effect fewer.
    const edited = recorded('retry-doubles-effect');
    const ledger = edited.retries!.ledger!;
    const applied = ledger.logLines.filter((l) => l.text.includes('"event":"applied"'));
    ledger.logLines.splice(ledger.logLines.indexOf(applied.at(-1)!), 1);
    expect(summarize(edited, 1, null).retries?.effects).toBe('1 applied, 0 already applied');
    expect(summarize(withStreamEnd(100), 1, null).retries).toBeNull();
  });

  it("dates an end by the container's death: its own exit line, else the runtime's SIGKILL, and times the teardown after it", () => {
    const recorded = (dir: string, name: string): Observation =>
      JSON.parse(
        readFileSync(new URL(`../grade/fixtures/${dir}/node/${name}.observation.json`, import.meta.url), 'utf8'),
      );
    const native = recorded('sidecar', 'sidecar-native-proxy');
    const app = native.containers!.find((c) => c.role === 'app')!;
    const proxy = native.containers!.find((c) => c.role === 'sidecar')!;
    const s = summarize(native, 1, null);
    const exitAt = Date.parse(app.exitLogged!.at.time);
    expect(s.offsets.diedToEnded).toBe(Math.round(Date.parse(app.terminated!.at.wall) - exitAt) / 1000);
    expect(s.offsets.died).toBe(Math.round(exitAt - Date.parse(native.timeline.deleteIssued!.at.wall)) / 1000);
    expect(s.offsets.sidecarTermToDied).toBe(
      Math.round(Date.parse(proxy.exitLogged!.at.time) - Date.parse(proxy.termReceived!.at.time)) / 1000,
    );
    // A SIGKILLed app logs no exit: its death is the runtime's kill, and nothing dates it without one.
    const cut = recorded('retries', 'retry-doubles-effect');
    const cutApp = cut.containers!.find((c) => c.role === 'app')!;
    expect(cutApp.exitLogged).toBeNull();
    const undated = summarize(cut, 1, null).offsets;
    expect([undated.died, undated.reactionToDied, undated.diedToEnded]).toEqual([null, null, null]);
    const killedAt = Date.parse(cutApp.terminated!.at.wall) - 250;
    const dated = summarize(cut, 1, null, { app: killedAt, sidecar: null }).offsets;
    expect(dated.diedToEnded).toBe(0.25);
    expect(dated.reactionToDied).toBe(Math.round((dated.reactionToEnded! - 0.25) * 1000) / 1000);
  });
});
