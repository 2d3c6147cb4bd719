// The live pod and the delete: what the scenario asked for against what the pod carried (grace,
// hook), what the hook and server logged, and the grace the API gave the delete.
import { parsePreStop } from '../../server/contract-schemas.ts';
import { oneLine } from '../../lib/terminal.ts';
import { describePreStop, hookDurationSeconds, type PreStop } from '../scenario/schema.ts';
import { describeCitation, describeEvent, describeLine } from './sources.ts';
import { TOLERANCE_SECONDS } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

/** The hook the live pod carries, parsed back through the contract that rendered it. */
function liveHook(lifecycle: Record<string, unknown> | null): PreStop | string {
  return parsePreStop(lifecycle?.preStop);
}

/** What the hook's own lines must say: its handler's kind, and the ms it was asked for (none for `lab-hook fail`). */
function hookLineExpected(preStop: PreStop): { kind: 'exec' | 'httpGet'; ms: number | undefined } | null {
  switch (preStop.kind) {
    case 'exec-sleep':
      return { kind: 'exec', ms: hookDurationSeconds(preStop) * 1000 };
    case 'exec-fail':
      return { kind: 'exec', ms: undefined };
    case 'httpGet':
      return { kind: 'httpGet', ms: preStop.ms };
    case 'none':
    case 'sleep-action':
      return null;
  }
}

function liveLifecycle({ o, lab, logComplete, timeline }: Facts): Check {
  const id = 'evidence.live-lifecycle';
  if (!o.pod) return fail(id, 'the live pod was not read before the delete');
  const deleted = timeline.deleteIssued;
  if (deleted && o.pod.capturedAt.mono > deleted.at.mono)
    return fail(id, 'the pod was read after the delete was issued, not before');
  if (o.pod.terminationGracePeriodSeconds !== o.scenario.terminationGracePeriodSeconds) {
    return fail(
      id,
      `the live pod's grace is ${o.pod.terminationGracePeriodSeconds}s but the scenario asked for ${o.scenario.terminationGracePeriodSeconds}s`,
    );
  }
  if (!o.pod.containers.length) return fail(id, 'the live pod was captured with no containers');
  const hooks = o.pod.containers.map((c) => liveHook(c.lifecycle));
  const hasPreStop = hooks.some((h) => typeof h === 'string' || h.kind !== 'none');
  if (hasPreStop !== (o.scenario.preStop.kind !== 'none')) {
    return fail(
      id,
      hasPreStop
        ? 'the live pod has a preStop hook the scenario does not'
        : 'the scenario has a preStop hook the live pod lacks',
    );
  }
  const hook = hooks[0]!;
  if (typeof hook === 'string') return fail(id, `the live pod has ${hook}`);
  if (describePreStop(hook) !== describePreStop(o.scenario.preStop)) {
    return fail(
      id,
      `the live pod's hook is ${describePreStop(hook)} but the scenario says ${describePreStop(o.scenario.preStop)}`,
    );
  }
  // The hook's own log lines say how long it was asked to run.
  const want = hookLineExpected(o.scenario.preStop);
  const wantMs = hookDurationSeconds(o.scenario.preStop) * 1000;
  for (const l of lab.filter((x) => x.event === 'hook-start' || x.event === 'hook-end')) {
    if (!want)
      return fail(
        id,
        `${describeLine(l)} shows a hook in the container, but the scenario's hook (${describePreStop(o.scenario.preStop)}) leaves none`,
      );
    if (want.ms === undefined) {
      // `lab-hook fail` writes one line, hook-start with fail: true, and ends at once.
      if (l.event !== 'hook-start' || l.fields.fail !== true)
        return fail(
          id,
          `${describeLine(l)} is not the one line a hook that fails at once writes (hook-start, fail: true)`,
        );
    } else if (l.fields.ms !== want.ms) {
      return fail(
        id,
        `${describeLine(l)} says the hook was asked for ${oneLine(String(l.fields.ms))} ms, the scenario for ${want.ms} ms`,
      );
    }
    if (l.fields.kind !== want.kind)
      return fail(
        id,
        `${describeLine(l)} says a ${oneLine(String(l.fields.kind))} hook ran, the scenario's is ${want.kind}`,
      );
  }
  // The hook's own lines are stamped by its own clock: their distance is the length it really ran.
  const hookStart = lab.find((l) => l.event === 'hook-start');
  const hookEnd = lab.find((l) => l.event === 'hook-end');
  if (hookStart && hookEnd) {
    const ranMs = wallMs(hookEnd.time) - wallMs(hookStart.time);
    const apart = `${describeLine(hookStart)} and ${describeLine(hookEnd)} are ${Math.round(ranMs)} ms apart, but the hook's length is ${wantMs} ms (scenario, live pod and the lines' own ms)`;
    // A sleep never ends early; it can end late on a starved machine (4067 ms for 3000, 10 students at
    // once on the real node), which an edit could also give: then the hook's end cannot be trusted.
    if (ranMs < wantMs - TOLERANCE_SECONDS * 1000) return fail(id, apart);
    if (ranMs > wantMs + TOLERANCE_SECONDS * 1000)
      return inconclusive(
        id,
        `${apart}: the machine was starved while the hook slept, or the times were edited; the hook's end cannot be trusted`,
      );
  }
  const listening = lab.find((l) => l.event === 'listening');
  // A server that never started (it crashed) is a failed run, not a forged file: nothing to grade.
  if (!listening && logComplete)
    return inconclusive(
      id,
      'the container log has no line of the server starting: it never ran, or nothing says how it ran',
    );
  if (listening && listening.fields.mode !== o.scenario.mode)
    return fail(
      id,
      `${describeLine(listening)} says the server ran in ${oneLine(String(listening.fields.mode))} mode, the scenario says ${o.scenario.mode}`,
    );
  if (
    (o.scenario.preStop.kind === 'exec-sleep' || o.scenario.preStop.kind === 'exec-fail') &&
    logComplete &&
    !hookStart
  ) {
    return inconclusive(
      id,
      `the scenario's preStop is the lab's exec hook, which logs hook-start first, but the complete container log has no hook-start line: nothing shows the hook ran`,
    );
  }
  return pass(
    id,
    `grace and hook (${describePreStop(hook)}) were read from the live pod before the delete and match the scenario and the hook's log`,
  );
}

/** The grace the model uses comes from the delete response; every other source must agree with it. */
function deleteGrace(f: Facts): Check {
  const id = 'evidence.delete-grace';
  const ack = f.timeline.deleteAcknowledged;
  if (!ack)
    return f.timeline.deleteIssued
      ? fail(id, 'the delete was issued but its response is not in the file')
      : pass(id, 'no delete was issued');
  // termlab's delete sends the scenario's deleteGracePeriodSeconds when it has one (kubectl delete
  // --grace-period), and no grace of its own otherwise: then the API takes the pod's.
  const spec = f.o.pod?.terminationGracePeriodSeconds ?? f.o.scenario.terminationGracePeriodSeconds;
  const asked = f.o.scenario.deleteGracePeriodSeconds ?? null;
  const expected = Math.max(0, asked ?? spec);
  // The API deletes a pod that has already finished at once (grace 0): the model has nothing to apply.
  // One the kubelet had already ended for its deadline (deadline.ts cross-examines that status) was the test itself.
  const endedFirst = ack.deletionGracePeriodSeconds === 0 ? deadlineEndedBefore(f, ack.at.mono) : null;
  if (endedFirst)
    return pass(
      id,
      `the delete response says grace 0s: ${endedFirst} had shown the pod ended for its active deadline (DeadlineExceeded) before the delete's answer, and the API deletes a finished pod at once`,
    );
  if (ack.deletionGracePeriodSeconds === 0 && expected !== 0)
    return inconclusive(
      id,
      `the delete response says grace 0s, not the spec's ${spec}s: the API does that for a pod that had already finished, so the run tested nothing`,
    );
  if (ack.deletionGracePeriodSeconds !== expected) {
    return fail(
      id,
      asked === null
        ? `the delete response says grace ${ack.deletionGracePeriodSeconds}s, but the live pod's spec says ${spec}s and termlab sends no grace of its own`
        : `the delete response says grace ${ack.deletionGracePeriodSeconds}s, but termlab's delete asked for ${asked}s (the scenario's deleteGracePeriodSeconds)`,
    );
  }
  let sawDeletion = false;
  for (const source of f.states) {
    const grace = source.deletionGracePeriodSeconds;
    if (source.deletionTimestamp !== null) sawDeletion = true;
    // 0 is the kubelet's own final delete once the containers are gone.
    if (grace !== null && grace !== ack.deletionGracePeriodSeconds && grace !== 0) {
      return fail(
        id,
        `${describeCitation(source.citation)} says grace ${grace}s, the delete response ${ack.deletionGracePeriodSeconds}s`,
      );
    }
    if (source.deletionTimestamp !== null && source.receivedAt < (f.timeline.deleteIssued?.at.mono ?? 0)) {
      return fail(id, `${describeCitation(source.citation)} shows the deletion before the harness issued the delete`);
    }
  }
  const deletionTimestamps = new Set(f.states.map((s) => s.deletionTimestamp).filter((t) => t !== null));
  if (deletionTimestamps.size && !deletionTimestamps.has(ack.deletionTimestamp)) {
    return fail(
      id,
      `the delete response's deletionTimestamp ${ack.deletionTimestamp} is in no watch event or pod read`,
    );
  }
  return pass(
    id,
    `grace ${ack.deletionGracePeriodSeconds}s: the delete response, the live pod${sawDeletion ? ' and the watch' : ''} agree`,
  );
}

/** The watch event that showed the pod Failed for its deadline before the delete's answer came, if one did. */
function deadlineEndedBefore(f: Facts, beforeMono: number): string | null {
  const e = f.o.evidence.watchEvents.find(
    (w) => w.receivedAt.mono < beforeMono && w.phase === 'Failed' && w.statusReason === 'DeadlineExceeded',
  );
  return e ? describeEvent(e) : null;
}

export function livePodChecks(f: Facts): Check[] {
  return [liveLifecycle(f), deleteGrace(f)];
}
