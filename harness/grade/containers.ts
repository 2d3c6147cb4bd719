// Every container of a pod with a sidecar, cross-examined as the lab container is (issue 26): the file's
// container records against their recomputation from the evidence, each sidecar's own log against its
// clocks, the harness's receipt and the pod watch, its exit against its own exit line, and the request as
// the proxy passed it on against the client's record. A hand edit of one field lands in one of these.
import { LAB_EXIT_CODES, PROXY_CONTAINER } from '../../server/contract.ts';
import { oneLine } from '../../lib/terminal.ts';
import { anchor } from './kubelet-times.ts';
import { tooCloseToDiffer } from './outcome.ts';
import { describeCitation, describeLine, type LabLine } from './sources.ts';
import { KUBELET_EXTRA_DELAY_SECONDS, TOLERANCE_SECONDS, type ContainerPrediction, type Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

/** Rounding of the lab's millisecond times, and a Node process's wall clock drifting from the system's. */
const CLOCK_SLACK_MS = 50;
/** Each process's lines derive wall from monotonic time (server/events.ts): they differ only by rounding. */
const CONTAINER_CLOCK_DRIFT_MS = 2;

const lineOf = (container: string, l: { line: number; event?: string }) => `${container}'s ${describeLine(l)}`;

/** The file's container records are the ones its evidence gives (observation/timeline.ts deriveContainers). */
function containersCited(f: Facts): Check {
  const id = 'evidence.containers-cited';
  const claimed = f.o.containers;
  if (!claimed) {
    return f.o.scenario.sidecar
      ? fail(id, 'the scenario has a sidecar, but the file records no container of the pod (containers)')
      : pass(id, "a one-container pod: its timeline is the lab container's");
  }
  if (claimed.length !== f.containers.length)
    return fail(id, `the file records ${claimed.length} container(s), the live pod has ${f.containers.length}`);
  for (const [i, want] of f.containers.entries()) {
    const got = claimed[i]!;
    for (const key of Object.keys(want) as (keyof typeof want)[]) {
      if (JSON.stringify(got[key]) !== JSON.stringify(want[key])) {
        return fail(
          id,
          `containers.${i}.${key} (${oneLine(want.name)}) says ${oneLine(JSON.stringify(got[key]) ?? 'nothing')}, but the evidence gives ${oneLine(JSON.stringify(want[key]) ?? 'nothing')}`,
        );
      }
    }
  }
  return pass(
    id,
    `every container's record (${f.containers.map((c) => c.name).join(', ')}) is the one its own log and the watch give`,
  );
}

/** Each sidecar's lines: typed, its pod's, one clock per process, written before the harness received them. */
function sidecarLines(f: Facts): Check {
  const id = 'evidence.sidecar-lines';
  const a = anchor(f);
  for (const [name, parsed] of f.sidecarLines) {
    const bad = parsed.malformed[0];
    if (bad)
      return fail(id, `${lineOf(name, bad)} is not a line the proxy or its hook writes: ${oneLine(bad.problem)}`);
    const raw = f.o.evidence.containerLogs?.find((l) => l.container === name)?.lines ?? [];
    const stranger = parsed.lines.find(
      (l) =>
        (l.fields.podUid !== undefined && l.fields.podUid !== f.o.pod?.uid) ||
        (l.fields.podName !== undefined && l.fields.podName !== f.o.pod?.name),
    );
    if (stranger)
      return fail(
        id,
        `${lineOf(name, stranger)} names pod ${oneLine(String(stranger.fields.podUid ?? stranger.fields.podName))}, not the live pod`,
      );
    const byPid = new Map<unknown, LabLine[]>();
    for (const l of parsed.lines) byPid.set(l.fields.pid, [...(byPid.get(l.fields.pid) ?? []), l]);
    for (const lines of byPid.values()) {
      const origin = wallMs(lines[0]!.time) - lines[0]!.mono;
      for (const [i, l] of lines.entries()) {
        if (i > 0 && l.mono < lines[i - 1]!.mono)
          return fail(id, `${lineOf(name, l)} is before ${describeLine(lines[i - 1]!)} on its process's own clock`);
        if (Math.abs(wallMs(l.time) - l.mono - origin) > CONTAINER_CLOCK_DRIFT_MS)
          return fail(
            id,
            `${lineOf(name, l)}'s wall time and monotonic time disagree with ${describeLine(lines[0]!)} of the same process`,
          );
      }
    }
    if (!a) continue;
    for (const l of parsed.lines) {
      const received = raw[l.line]?.receivedAt.mono;
      if (received === undefined) continue;
      const by = received + a.harnessToServerMs + a.rttMs + CLOCK_SLACK_MS;
      if (wallMs(l.time) > by)
        return fail(
          id,
          `${lineOf(name, l)} was written at ${l.time}, ${((wallMs(l.time) - by + CLOCK_SLACK_MS) / 1000).toFixed(3)}s after the harness received it`,
        );
    }
  }
  return pass(
    id,
    f.sidecarLines.size
      ? "every sidecar line is one its writer writes, on its process's one clock, before the harness received it"
      : 'no sidecar',
  );
}

/** Each sidecar's end: its own exit line, its TERM, the watch's state and the harness's sight of it tell one story. */
function sidecarExit(f: Facts): Check {
  const id = 'evidence.sidecar-exit';
  const a = anchor(f);
  for (const c of f.containers.filter((x) => x.role === 'sidecar')) {
    const lines = f.sidecarLines.get(c.name)?.lines ?? [];
    const exits = lines.filter((l) => l.event === 'exit' && l.fields.role !== undefined);
    if (exits.length > 1)
      return fail(id, `the ${c.name} logged its exit twice (${describeLine(exits[0]!)}, ${describeLine(exits[1]!)})`);
    const exit = exits[0];
    const term = lines.find((l) => l.event === 'signal' && l.fields.role !== undefined);
    const final = c.finalState;
    const whole =
      f.logComplete && !(f.o.evidence.containerLogs?.find((l) => l.container === c.name)?.endedEarly ?? true);
    if (exit && term && exit.mono < term.mono)
      return fail(
        id,
        `the ${c.name}'s ${describeLine(exit)} comes before its TERM (${describeLine(term)}), but it exits only on TERM`,
      );
    if (!final) {
      if (exit && f.o.run.complete)
        return inconclusive(
          id,
          `the ${c.name} logged its exit (${describeLine(exit)}), but no watch event or read shows it terminated`,
        );
      continue;
    }
    if (exit && exit.fields.code !== final.exitCode) {
      // The exit line is written just before the process ends: a SIGKILL between the two gives 137.
      if (final.exitCode === 137)
        return inconclusive(
          id,
          `the ${c.name}'s ${describeLine(exit)} says it was exiting ${String(exit.fields.code)}, but SIGKILL ended it first (137)`,
        );
      return fail(
        id,
        `the ${c.name}'s ${describeLine(exit)} says it exited ${String(exit.fields.code)}, but ${describeCitation(final.from)} shows ${final.exitCode}`,
      );
    }
    if (!exit && whole && (final.exitCode === 0 || final.exitCode === LAB_EXIT_CODES.immediate))
      return fail(
        id,
        `${describeCitation(final.from)} shows the ${c.name} exited ${final.exitCode}, an exit only its own code gives, but its whole log has no exit line`,
      );
    if (
      final.exitCode !== 137 &&
      final.reason !== null &&
      final.reason !== (final.exitCode === 0 ? 'Completed' : 'Error')
    )
      return fail(
        id,
        `${describeCitation(final.from)} shows the ${c.name} exited ${final.exitCode} with reason ${oneLine(final.reason)}, which the runtime never gives that code`,
      );
    // Written before the container ended, which is before the watch showed it (on the server's clock via the request's acceptance).
    if (a && c.terminated) {
      const by = c.terminated.at.mono + a.harnessToServerMs + a.rttMs + CLOCK_SLACK_MS;
      for (const l of [exit, term]) {
        if (l && wallMs(l.time) > by)
          return fail(
            id,
            `the ${c.name}'s ${describeLine(l)} was written at ${l.time}, after ${describeCitation(c.terminated.from)} had shown it terminated`,
          );
      }
    }
  }
  return pass(id, "each sidecar's exit line, TERM and final state agree");
}

/** The request as the proxy passed it on, against the client's record. */
function requestThroughProxy(f: Facts): Check {
  const id = 'evidence.request-through-proxy';
  if (!f.o.scenario.sidecar) return pass(id, "no proxy on the request's path");
  const lines = (f.sidecarLines.get(PROXY_CONTAINER.name)?.lines ?? []).filter((l) => l.fields.id === f.o.request.id);
  const accepted = lines.find((l) => l.event === 'accepted');
  const done = lines.find((l) => l.event === 'upstream-done');
  const whole =
    f.logComplete &&
    !(f.o.evidence.containerLogs?.find((l) => l.container === PROXY_CONTAINER.name)?.endedEarly ?? true);
  const r = f.o.request;
  if (f.timeline.requestAccepted && !accepted && whole)
    return fail(id, `the harness saw request ${r.id} accepted, but the proxy's whole log never shows it`);
  if (r.outcome === 'completed' && done && done.fields.outcome !== 'completed')
    return fail(
      id,
      `the request is recorded as completed, but the proxy's ${describeLine(done)} says it ended ${oneLine(String(done.fields.outcome))}`,
    );
  if (r.outcome === 'completed' && !done && whole)
    return fail(
      id,
      "the request is recorded as completed, but the proxy's whole log never shows the app's answer passed on",
    );
  if (r.outcome === 'cut' && done?.fields.outcome === 'completed')
    return inconclusive(
      id,
      `the proxy's ${describeLine(done)} says it passed the whole answer on, but the client saw it cut: lost between the proxy and the client`,
    );
  return pass(id, `the proxy's log agrees with the client's record (${r.outcome})`);
}

export function containerChecks(f: Facts): Check[] {
  if (!f.o.scenario.sidecar && !f.o.containers) return [];
  return [containersCited(f), sidecarLines(f), sidecarExit(f), requestThroughProxy(f)];
}

// --- outcome: each sidecar against the pod model ---------------------------------------------------

/** The server's clock's seconds after the delete for a sidecar line (wall: a process of its own). */
function sinceDelete(f: Facts, l: { time: string } | null | undefined): number | null {
  const a = anchor(f);
  return a && l ? (wallMs(l.time) - a.deleteWallMs) / 1000 : null;
}

const secs = (x: number) => `${x.toFixed(2)}s`;
const roleOf = (c: ContainerPrediction) =>
  c.role === 'app' ? 'the app' : `the ${c.name} (${c.native ? 'native sidecar' : 'regular container'})`;

/** Each sidecar's exit code, its TERM where the order puts it, and the words for who cut what. */
export function sidecarOutcomes(f: Facts, p: Prediction): Check[] {
  const pod = p.pod;
  if (!pod) return [];
  const checks: Check[] = [];
  // A sidecar on the other side of a decisive time by less than the node's jitter is not "differs" (outcome.ts).
  const tooClose = tooCloseToDiffer(p);
  for (const want of pod.containers.filter((c) => c.role === 'sidecar')) {
    const seen = f.containers.find((c) => c.name === want.name);
    const id = `outcome.sidecar-exit-code`;
    if (!seen?.finalState) {
      checks.push(inconclusive(id, `no final state of the ${want.name} to compare`));
      continue;
    }
    const shown = `${roleOf(want)} exited ${seen.finalState.exitCode} (${seen.finalState.reason ?? 'no reason'})`;
    if (seen.finalState.exitCode === want.exitCode) checks.push(pass(id, `${shown}, as the model predicts`));
    else if (tooClose)
      checks.push(
        inconclusive(
          id,
          `${shown}; the model predicts ${want.exitCode}, but the decisive times are within ${p.marginSeconds.toFixed(2)}s: too close to call`,
        ),
      );
    else checks.push(fail(id, `${shown}, but the model predicts ${want.exitCode} (${want.reason})`));
    checks.push(sidecarOrder(f, want));
  }
  checks.push(cutBy(f, p));
  return checks;
}

/** The sidecar's TERM against the order: with the app's for a regular container, after the app's end for a native one. */
function sidecarOrder(f: Facts, want: ContainerPrediction): Check {
  const id = 'attribution.termination-order';
  const seen = f.containers.find((c) => c.name === want.name)!;
  const app = f.containers.find((c) => c.role === 'app');
  const lines = f.sidecarLines.get(want.name)?.lines ?? [];
  const term = seen.termReceived ? lines.find((l) => l.line === seen.termReceived!.line) : undefined;
  const at = sinceDelete(f, term);
  if (at === null) return inconclusive(id, `no TERM of the ${want.name} in its log to place`);
  const slack = TOLERANCE_SECONDS + KUBELET_EXTRA_DELAY_SECONDS;
  if (Math.abs(at - want.termAt) > slack) {
    return inconclusive(
      id,
      `${roleOf(want)} got TERM ${secs(at)} after the delete, the model puts it at ${secs(want.termAt)} (${want.native ? (want.turnByTimer ? 'when the grace runs out while it waits for its turn' : 'once the app is gone') : "with the app's, a main container"}): more than ${slack}s apart`,
    );
  }
  // A native sidecar's turn comes when the app has exited: its TERM is after the app's own exit line.
  const appExit = app?.exitLogged ? sinceDelete(f, app.exitLogged.at) : null;
  if (want.native && !want.turnByTimer && appExit !== null && at < appExit - CLOCK_SLACK_MS / 1000) {
    return fail(
      id,
      `${roleOf(want)} got TERM ${secs(at)} after the delete, before the app exited (${secs(appExit)}): the kubelet stops a native sidecar only once every main container is gone or the grace is used up`,
    );
  }
  const how = want.native
    ? want.turnByTimer
      ? `the grace ran out while it waited for its turn (${secs(want.termAt)}), so it was stopped with the app still running and given the ${want.stopGraceSeconds}s minimum`
      : `after the app was gone${appExit !== null ? ` (app exited ${secs(appExit)})` : ''}`
    : "with the app's, as a main container";
  return pass(id, `${roleOf(want)} got TERM ${secs(at)} after the delete, ${how}; the model: ${secs(want.termAt)}`);
}

/** The client's outcome, named per container: who cut what, and what the app made of it. */
function cutBy(f: Facts, p: Prediction): Check {
  const id = 'attribution.cut-by';
  const pod = p.pod!;
  const app = f.containers.find((c) => c.role === 'app');
  const proxy = f.containers.find((c) => c.role === 'sidecar');
  const appLine = (event: string) => f.lab.find((l) => l.event === event && l.fields.id === f.o.request.id);
  const aborted = appLine('aborted'),
    completed = appLine('completed');
  const proxyEnd = proxy?.exitLogged ? sinceDelete(f, proxy.exitLogged.at) : null;
  const outcome = f.o.request.outcome;
  if (outcome !== 'cut' && outcome !== 'completed')
    return inconclusive(id, `the request was ${outcome}: nothing to attribute`);
  if (outcome === 'completed')
    return pass(
      id,
      `completed: the app finished its work${completed ? ` (${describeLine(completed)}, ${secs(sinceDelete(f, completed) ?? 0)})` : ''} and the ${proxy?.name ?? 'proxy'} passed it on${proxyEnd !== null ? `, then exited at ${secs(proxyEnd)}` : ''}`,
    );
  // The proxy left first: the app's `aborted` is its client (the proxy) going, not a lost path.
  if (proxyEnd !== null && aborted && wallMs(proxy!.exitLogged!.at.time) <= wallMs(aborted.time) + CLOCK_SLACK_MS) {
    const words = `cut: the ${proxy!.name} (${proxy!.native ? 'native sidecar' : 'regular container'}) exited ${proxy!.exitLogged!.code} at ${secs(proxyEnd)} while the app was still working; the app saw its client go (${describeLine(aborted)}, ${secs(sinceDelete(f, aborted) ?? 0)})${app?.exitLogged ? ` and exited ${app.exitLogged.code}` : ''}`;
    if (pod.cutBy === 'proxy') return pass(id, words);
    return tooCloseToDiffer(p)
      ? inconclusive(
          id,
          `${words}; the model has ${pod.cause}, but its decisive times are within ${p.marginSeconds.toFixed(2)}s: too close to call`,
        )
      : fail(id, `${words}; but the model has ${pod.cause}`);
  }
  const killed = app?.finalState?.exitCode === 137;
  const words = killed
    ? `cut: the app was killed (137) with its work unfinished${proxyEnd !== null ? `; the ${proxy!.name} exited ${proxy!.exitLogged!.code} at ${secs(proxyEnd)}` : ''}`
    : `cut${completed ? `, although ${describeLine(completed)} says the app finished its work` : ''}`;
  if (pod.cutBy === 'app' && killed) return pass(id, words);
  return inconclusive(id, `${words}; the model has ${pod.cause}`);
}

/**
 * The app's `aborted` line for the request came as the proxy on its path exited (its exit line no later,
 * on the node's one clock): the app's client was the proxy, so the kill of the proxy cut it; the harness
 * lost nothing. Without this, lost-path.ts would read the app's word as the harness losing its path.
 */
export function proxyLeftFirst(f: Facts, aborted: LabLine): boolean {
  const proxy = f.containers.find((c) => c.role === 'sidecar' && c.exitLogged !== null);
  return proxy !== undefined && wallMs(proxy.exitLogged!.at.time) <= wallMs(aborted.time) + CLOCK_SLACK_MS;
}
