// The final container state, checked against every watch event and pod read that shows the lab
// container, not only the one it cites: one container, one end, seen after the deletion.
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { carriesPod, describeCitation, describeEvent, describeLine, resolveState } from './sources.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts, StateSource } from './facts.ts';

/** A file whose watch shows one resourceVersion twice with different content has been edited. */
function watchConsistent({ o, container, states }: Facts): Check {
  const id = 'evidence.watch-consistent';
  // An ERROR event is a Status (a 410, a server error), a BOOKMARK only a resourceVersion: neither is a pod.
  const posing = o.evidence.watchEvents.find(
    (e) => !carriesPod(e) && (e.uid !== null || e.phase !== null || e.containers.length > 0),
  );
  if (posing)
    return fail(
      id,
      `${describeEvent(posing)} carries a pod's ${posing.uid !== null ? 'UID' : posing.phase !== null ? 'phase' : 'containers'}, but ${posing.type === 'ERROR' ? 'an' : 'a'} ${posing.type} event is a Status, never a pod`,
    );
  // Content is compared only where a resourceVersion comes again (serialising every event was a tenth of the grading).
  const contentOf = ({ receivedAt: _received, ...content }: (typeof o.evidence.watchEvents)[number]) =>
    JSON.stringify(content);
  const seen = new Map<string, (typeof o.evidence.watchEvents)[number]>();
  for (const e of o.evidence.watchEvents) {
    const key = e.resourceVersion;
    const earlier = seen.get(key);
    if (earlier !== undefined && e.type !== 'ERROR' && contentOf(earlier) !== contentOf(e))
      return fail(id, `two watch events carry resourceVersion ${key} with different content`);
    seen.set(key, e);
  }
  const names = new Set(o.pod?.containers.map((c) => c.name) ?? []);
  if (names.size) {
    for (const source of states) {
      const stranger = source.containers.find((c) => !names.has(c.name));
      if (stranger)
        return fail(
          id,
          `${describeCitation(source.citation)} shows a container "${stranger.name}" the live pod does not have`,
        );
    }
  }
  let ended: { source: StateSource; exitCode?: number; reason?: string } | null = null;
  for (const source of states) {
    const shown = source.containers.find((c) => c.name === container);
    const status =
      source.citation.kind === 'watch'
        ? o.evidence.watchEvents.find((e) => e.resourceVersion === source.citation.resourceVersion)
        : o.evidence.podReads[(source.citation as { index: number }).index];
    const phase = status?.phase;
    const terminated = shown?.state === 'terminated';
    // A pod the kubelet failed for its deadline is Failed whatever its exit (deadline.ts cross-examines that reason).
    const evicted = phase === 'Failed' && status?.statusReason === 'DeadlineExceeded';
    // The kubelet's own final delete (grace 0) comes only once the containers are gone.
    if (source.deletionGracePeriodSeconds === 0 && !terminated)
      return fail(id, `${describeCitation(source.citation)} shows grace 0 while the container still runs`);
    // kubelet_pods.go getPhase: the main containers decide it (a native sidecar's end does not count): Succeeded when
    // every one exited 0, Failed when one did not (a regular sidecar proxy that exits 17 fails the pod).
    const mains = source.containers.filter((c) => !c.init);
    const mainsZero = mains.every((c) => c.state === 'terminated' && c.exitCode === 0);
    const mainsEnded = mains.every((c) => c.state === 'terminated');
    if (
      (phase === 'Succeeded' || phase === 'Failed') &&
      !(terminated && mainsEnded && (evicted || (phase === 'Succeeded') === mainsZero))
    ) {
      return fail(
        id,
        `${describeCitation(source.citation)} shows phase ${phase} with the container ${shown ? `${shown.state}${shown.exitCode !== undefined ? ` ${shown.exitCode}` : ''}` : 'missing'}`,
      );
    }
    if (!shown) continue;
    if (shown.state === 'terminated') {
      if (ended && (ended.exitCode !== shown.exitCode || ended.reason !== shown.reason)) {
        return fail(
          id,
          `${describeCitation(ended.source.citation)} shows exit ${ended.exitCode} (${ended.reason ?? 'no reason'}) but ${describeCitation(source.citation)} shows ${shown.exitCode} (${shown.reason ?? 'no reason'}): a container ends once`,
        );
      }
      ended ??= { source, exitCode: shown.exitCode, reason: shown.reason };
    } else if (ended) {
      return fail(
        id,
        `${describeCitation(source.citation)} shows the container ${shown.state} after ${describeCitation(ended.source.citation)} showed it terminated`,
      );
    }
  }
  const deleted = o.evidence.watchEvents.findIndex((e) => e.type === 'DELETED');
  if (
    deleted >= 0 &&
    o.evidence.watchEvents.slice(deleted + 1).some((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR')
  ) {
    return fail(id, `${describeEvent(o.evidence.watchEvents[deleted]!)} is followed by more events of the same pod`);
  }
  return pass(id, 'every watch event and pod read tells one story: one container, ended once');
}

function terminationObserved(f: Facts): Check {
  const id = 'evidence.terminated-observed';
  const final = f.o.finalState;
  const container = f.container;
  const ends = f.states.filter((s) => s.containers.some((c) => c.name === container && c.state === 'terminated'));
  if (!final) {
    if (ends.length)
      return fail(
        id,
        `the file records no final state, but ${describeCitation(ends[0]!.citation)} shows the container terminated`,
      );
    const gone =
      f.o.evidence.watchEvents.some((e) => e.type === 'DELETED') || f.o.evidence.podReads.some((r) => !r.found);
    return inconclusive(
      id,
      gone
        ? 'evidence lost: the pod is gone and no terminated container state was ever seen'
        : 'no terminated container state was observed',
    );
  }
  if (container !== null && final.container !== container)
    return fail(id, `the final state is of container "${final.container}", but the lab container is "${container}"`);
  const cited = resolveState(f, final.from);
  if (typeof cited === 'string') return fail(id, `the final state cites ${cited}`);
  const shown = cited.containers.find((c) => c.name === final.container);
  if (shown?.state !== 'terminated' || shown.exitCode !== final.exitCode || (shown.reason ?? null) !== final.reason) {
    return fail(
      id,
      `the final state says exit ${final.exitCode} (${final.reason ?? 'no reason'}), but ${describeCitation(final.from)} shows ${shown ? `${shown.state}${shown.exitCode !== undefined ? ` ${shown.exitCode}` : ''} (${shown.reason ?? 'no reason'})` : 'no such container'}`,
    );
  }
  // A read stands in for the watch only when the watch never showed the end.
  const watchEnd = ends.find((s) => s.citation.kind === 'watch');
  if (final.from.kind === 'read' && watchEnd)
    return fail(
      id,
      `the final state cites ${describeCitation(final.from)}, but ${describeCitation(watchEnd.citation)} showed the end first`,
    );
  // The derivation the runner used names one source for the end: the file must cite that one.
  const expected = f.derived.finalState;
  if (expected && describeCitation(expected.from) !== describeCitation(final.from))
    return fail(
      id,
      `the final state (finalState.from) cites ${describeCitation(final.from)}, but the evidence gives ${describeCitation(expected.from)}`,
    );
  const issued = f.timeline.deleteIssued;
  if (issued && !f.states.some((s) => s.deletionTimestamp !== null)) {
    return fail(
      id,
      'the container is claimed terminated after a delete, but no watch event or pod read shows the pod being deleted',
    );
  }
  // A kubelet always gives a terminated container a reason and a finishedAt: one missing cannot be judged.
  const reasonless = f.states.find((s) =>
    s.containers.some((c) => c.name === final.container && c.state === 'terminated' && c.reason === undefined),
  );
  if (reasonless)
    return inconclusive(
      id,
      `${describeCitation(reasonless.citation)} shows the container terminated with no reason, which the API always fills: the file is missing the field \`reason\``,
    );
  if (final.reason === null)
    return inconclusive(
      id,
      `the final state says exit ${final.exitCode} with no reason, which the API always fills: the file is missing the field \`finalState.reason\``,
    );
  // (A final state taken from a pod read has none: the runner records no times from a read.)
  if (final.finishedAt === null && final.from.kind === 'watch')
    return inconclusive(
      id,
      `the final state has no finishedAt, though ${describeCitation(final.from)} shows the container terminated and the API always fills it: the file is missing the field \`finalState.finishedAt\``,
    );
  const where =
    final.from.kind === 'read'
      ? `${describeCitation(final.from)} (the watch missed the end)`
      : describeCitation(final.from);
  return pass(
    id,
    `the container was seen terminated (exit ${final.exitCode}) in ${where}, and every other source agrees`,
  );
}

/** The lab server logs its own exit code; the kubelet's must be the same. */
function serverExit({ o, lab, logComplete: logIsWhole }: Facts): Check {
  const id = 'evidence.server-exit';
  const exits = lab.filter((l) => l.event === 'exit');
  const final = o.finalState;
  if (exits.length > 1)
    return fail(id, `the server logged its exit twice (${describeLine(exits[0]!)}, ${describeLine(exits[1]!)})`);
  const exit = exits[0];
  if (!final) return pass(id, "no final state to compare with the server's exit line");
  // The exit line is written just before process.exit: a SIGKILL can land between the two, and then
  // the runtime reports 137. A race at the kill, not a contradiction, and nothing the model can call.
  if (
    exit &&
    (exit.fields.code === 0 || exit.fields.code === LAB_EXIT_CODE) &&
    final.exitCode === 137 &&
    final.reason !== 'OOMKilled'
  ) {
    return inconclusive(
      id,
      `${describeLine(exit)} says the server was exiting ${String(exit.fields.code)}, but SIGKILL ended it first (137): the kill and the exit raced`,
    );
  }
  if (exit && exit.fields.code !== final.exitCode)
    return fail(
      id,
      `${describeLine(exit)} says the server exited ${String(exit.fields.code)}, the final state says ${final.exitCode}`,
    );
  if (!exit && (final.exitCode === 0 || final.exitCode === LAB_EXIT_CODE) && logIsWhole)
    return fail(
      id,
      `the final state says exit ${final.exitCode}, an exit only the server's own code gives, but the server never logged it`,
    );
  // In graceful mode the server exits 0 only after a TERM, which it logs first.
  if (o.scenario.mode === 'graceful' && final.exitCode === 0 && logIsWhole && !lab.some((l) => l.event === 'signal')) {
    return inconclusive(
      id,
      'the final state says exit 0, which in graceful mode the server gives only after a TERM, but its complete log has no signal line',
    );
  }
  return pass(
    id,
    exit
      ? `${describeLine(exit)} and the final state agree on exit ${final.exitCode}`
      : `no exit line, as a process killed by a signal leaves none (exit ${final.exitCode})`,
  );
}

/** The lab server's own exit on TERM in immediate mode (the pod contract). */
const LAB_EXIT_CODE = LAB_EXIT_CODES.immediate;

export function finalStateChecks(f: Facts): Check[] {
  return [terminationObserved(f), watchConsistent(f), serverExit(f)];
}
