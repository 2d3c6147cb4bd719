// Builds consistent observation files for grader tests and benchmarks: the same shape the runner
// writes, with times laid out the way a kubelet following the rules would produce them.
import { OBSERVATION_SCHEMA_VERSION, type Observation, type WatchEvent } from '../../harness/observation/schema.ts';
import { NEWEST_MINOR, predict, RULES_BY_MINOR } from '../../harness/grade/theory.ts';
import { stopSignalFromLivePod } from '../../harness/grade/stop-signal.ts';
import { deriveTimeline } from '../../harness/observation/timeline.ts';
import { renderPreStop } from '../../server/contract-schemas.ts';
import { hookDurationSeconds, type Scenario } from '../../harness/scenario/schema.ts';

const SHA = (fill: string) => fill.repeat(64).slice(0, 64);

export const BASE_SCENARIO: Scenario = {
  name: 'short-grace',
  mode: 'graceful',
  preStop: { kind: 'exec-sleep', seconds: 3 },
  terminationGracePeriodSeconds: 5,
  workMs: 10_000,
  deleteDelayMs: 1_000,
};

export interface Actual {
  outcome: Observation['request']['outcome'];
  exitCode: number;
  reason: string;
  /** Seconds from the delete to the container's end; the model's when omitted. */
  exitAt?: number;
  /** A scenario with a stopSignal: the cluster kept it on the live pod (its gate on); dropped when omitted. */
  stopSignalKept?: boolean;
}

const RUN_START = Date.parse('2026-11-30T10:00:00.000Z');
const wall = (mono: number) => new Date(RUN_START + mono).toISOString();
const at = (mono: number) => ({ mono, wall: wall(mono) });
const apiTime = (mono: number) =>
  new Date(Math.floor((RUN_START + mono) / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export function buildObservation(
  scenario: Scenario = BASE_SCENARIO,
  actual?: Partial<Actual>,
  uid = 'uid-0001',
): Observation {
  // A stopSignal as the live pod below shows it: kept (the gate on) or dropped.
  const kept = Boolean(actual?.stopSignalKept && scenario.stopSignal);
  const liveStop = kept ? { stopSignal: scenario.stopSignal } : {};
  const plan = stopSignalFromLivePod(scenario, liveStop, RULES_BY_MINOR.get(NEWEST_MINOR)!);
  const model = predict(scenario, null, undefined, null, undefined, plan);
  const outcome = actual?.outcome ?? model.outcome;
  const exitCode = actual?.exitCode ?? model.exitCode;
  const reason = actual?.reason ?? (exitCode === 0 ? 'Completed' : 'Error');
  const accepted = 1250;
  const deleted = accepted + scenario.deleteDelayMs;
  // A run that completed where the model says cut ends when its work does: the server exits after it.
  const defaultExitAt =
    outcome === 'completed' && model.outcome !== 'completed'
      ? (scenario.workMs - scenario.deleteDelayMs) / 1000 + 0.1
      : model.exitAt;
  const exitMono = deleted + (actual?.exitAt ?? defaultExitAt) * 1000 + 40;
  const requestEnd =
    outcome === 'completed' ? accepted + scenario.workMs : outcome === 'rejected' ? 1210 : exitMono + 5;
  const logLine = (mono: number, event: string, extra: object = {}) => ({
    receivedAt: at(mono + 3),
    apiTime: `${wall(mono)}`,
    text: JSON.stringify({ event, time: wall(mono), mono: mono + 500, pid: 7, podUid: uid, ...extra }),
  });
  const hookMs = hookDurationSeconds(scenario.preStop) * 1000;
  const hookKind = scenario.preStop.kind === 'httpGet' ? 'httpGet' : 'exec';
  const bytes = 1234;
  const logLines = [logLine(800, 'listening', { mode: scenario.mode, host: '127.0.0.3', port: 8080 })];
  if (outcome === 'rejected') logLines.push(logLine(1205, 'rejected', { id: 'req-1', reason: 'draining' }));
  else logLines.push(logLine(accepted - 2, 'accepted', { id: 'req-1', ms: scenario.workMs }));
  const hookStart = scenario.preStop.kind === 'none' ? null : deleted + 60;
  const hookEnd = model.hookEndsAt === null ? null : deleted + model.hookEndsAt * 1000 + 60;
  const hookLogs = scenario.preStop.kind === 'exec-sleep' || scenario.preStop.kind === 'httpGet';
  if (hookStart !== null && hookLogs) logLines.push(logLine(hookStart, 'hook-start', { kind: hookKind, ms: hookMs }));
  const hookEndLogged = hookEnd !== null && hookLogs && model.hookEndsAt! < model.graceSeconds;
  if (hookEndLogged) logLines.push(logLine(hookEnd!, 'hook-end', { kind: hookKind, ms: hookMs }));
  const termMono = deleted + model.termAt * 1000 + 70;
  logLines.push(logLine(termMono, 'signal', { signal: model.stopSignal?.sent ?? 'SIGTERM', repeated: false }));
  if (outcome === 'completed')
    logLines.push(logLine(requestEnd - 3, 'completed', { id: 'req-1', ms: scenario.workMs, bytes }));
  if (exitCode === 0 || exitCode === 17) logLines.push(logLine(exitMono - 10, 'exit', { code: exitCode }));
  logLines.sort((a, b) => a.receivedAt.mono - b.receivedAt.mono);

  const deletionTimestamp = apiTime(deleted + scenario.terminationGracePeriodSeconds * 1000);
  const container = (state: 'running' | 'terminated', ready: boolean) => ({
    name: 'lab',
    state,
    ready,
    ...(state === 'terminated' ? { exitCode, reason } : {}),
  });
  const event = (
    type: WatchEvent['type'],
    rv: number,
    mono: number,
    phase: string,
    ready: boolean,
    state: 'running' | 'terminated',
    deleting: boolean,
  ): WatchEvent => ({
    type,
    resourceVersion: String(rv),
    receivedAt: at(mono),
    uid,
    phase,
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    deletionTimestamp: deleting ? deletionTimestamp : null,
    deletionGracePeriodSeconds: deleting ? scenario.terminationGracePeriodSeconds : null,
    containers: [container(state, ready)],
  });
  const terminatedMono = exitMono + 15;
  const finalPhase = exitCode === 0 ? 'Succeeded' : 'Failed';
  const watchEvents = [
    event('MODIFIED', 105, deleted + 12, 'Running', true, 'running', true),
    event('MODIFIED', 106, terminatedMono, finalPhase, false, 'terminated', true),
    event('DELETED', 108, terminatedMono + 30, finalPhase, false, 'terminated', true),
  ];
  const handler = renderPreStop(scenario.preStop, 'http');
  const lifecycle = handler || kept ? { ...(handler ? { preStop: handler } : {}), ...liveStop } : null;
  const pod: Observation['pod'] = {
    name: `termlab-${scenario.name}`,
    namespace: 'default',
    uid,
    resourceVersion: '104',
    terminationGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
    capturedAt: at(1100),
    containers: [{ name: 'lab', image: 'termlab/lab-server:0.1.0', lifecycle }],
  };
  const derived = deriveTimeline({
    scenario,
    pod,
    deleteIssued: at(deleted),
    evidence: { watchEvents, podReads: [], logLines },
  });
  return {
    schemaVersion: OBSERVATION_SCHEMA_VERSION,
    kind: 'termlab.observation',
    run: {
      runId: 'run-20261130-100000-abcd',
      ownerId: 'student-a',
      harnessVersion: '0.1.0',
      observedAt: wall(Math.max(terminatedMono, requestEnd, ...logLines.map((l) => l.receivedAt.mono)) + 30),
      complete: true,
      cluster: {
        context: 'termlab-sim',
        server: 'https://127.0.0.1:6443',
        serverVersion: 'v1.34.0-termlab-sim',
        nodeName: 'sim-node',
        containerRuntime: 'termlab-sim://0.1.0',
        simulated: true,
      },
      transport: 'portforward',
    },
    scenario,
    pod,
    timeline: {
      watchEstablished: { at: at(1000) },
      podReady: { at: at(900) },
      requestSent: { at: at(1200) },
      requestAccepted: outcome === 'rejected' ? null : { at: at(accepted) },
      deleteIssued: { at: at(deleted) },
      deleteAcknowledged: {
        at: at(deleted + 10),
        deletionTimestamp,
        deletionGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
      },
      // The derived points as the runner derives them (harness/observation/timeline.ts).
      hookStart: derived.hookStart,
      hookEnd: derived.hookEnd,
      termReceived: derived.termReceived,
      requestEnded: { at: at(requestEnd) },
      containerTerminated: derived.containerTerminated,
      podDeleted: derived.podDeleted,
    },
    request: {
      id: 'req-1',
      status: outcome === 'rejected' ? 503 : 200,
      bytes: outcome === 'rejected' ? 0 : bytes,
      sha256: outcome === 'rejected' ? null : SHA('ab'),
      done: outcome === 'completed' ? { bytes, sha256: SHA('ab') } : null,
      doneSeen: outcome === 'completed',
      podUid: outcome === 'rejected' ? null : uid,
      errorCode: outcome === 'cut' ? 'UND_ERR_SOCKET' : null,
      outcome,
    },
    finalState: derived.finalState && {
      ...derived.finalState,
      signal: null,
      startedAt: apiTime(700),
      finishedAt: apiTime(exitMono),
      message: null,
    },
    evidence: {
      watchEvents,
      watchLifecycle: [{ event: 'connected', at: at(1000), resourceVersion: '104' }],
      podReads: [],
      transport: [],
      logLines,
      logEndedEarly: false,
      podEvents: [{ reason: 'Killing', message: 'Stopping container lab', type: 'Normal', time: apiTime(deleted) }],
    },
    cleanup: [{ action: 'remove finalizer termlab.io/hold', at: at(terminatedMono + 20), ok: true, error: null }],
  };
}

/** The example set: one file per outcome the lab can produce. */
export function exampleObservations(): Record<string, Observation> {
  const restored: Scenario = {
    ...BASE_SCENARIO,
    name: 'restored-grace',
    terminationGracePeriodSeconds: 15,
    labPair: { id: 'grace', role: 'restored' },
  };
  const short: Scenario = { ...BASE_SCENARIO, labPair: { id: 'grace', role: 'short' } };
  const immediate: Scenario = {
    ...BASE_SCENARIO,
    name: 'immediate',
    mode: 'immediate',
    terminationGracePeriodSeconds: 30,
  };
  const oom: Scenario = { ...BASE_SCENARIO, name: 'oom-killed', terminationGracePeriodSeconds: 30 };
  const invalid = buildObservation({ ...BASE_SCENARIO, name: 'hand-edited' }, undefined, 'uid-0006');
  // A "fixed" outcome typed in by hand: the result no longer matches the watch event it cites.
  invalid.request = {
    ...invalid.request,
    outcome: 'completed',
    doneSeen: true,
    done: { bytes: invalid.request.bytes, sha256: invalid.request.sha256! },
    errorCode: null,
  };
  invalid.finalState = { ...invalid.finalState!, exitCode: 0, reason: 'Completed' };
  return {
    'completed-0': buildObservation(restored, undefined, 'uid-0001'),
    'cut-137-after-grace': buildObservation(short, undefined, 'uid-0002'),
    'cut-17-immediate': buildObservation(immediate, undefined, 'uid-0003'),
    'rejected-503': buildObservation(
      { ...BASE_SCENARIO, name: 'rejected', terminationGracePeriodSeconds: 30 },
      { outcome: 'rejected', exitCode: 0 },
      'uid-0004',
    ),
    'oom-137': buildObservation(oom, { outcome: 'cut', exitCode: 137, reason: 'OOMKilled', exitAt: 0.5 }, 'uid-0005'),
    'evidence-invalid': invalid,
  };
}
