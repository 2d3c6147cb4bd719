// One rule for lost paths: a request the harness lost (its port-forward closed or errored, the API
// unreachable, the run interrupted) is never graded as cut or completed by the kubelet. The
// server's own word decides whether a path was lost: a server SIGKILLed writes nothing more, so
// an `aborted` line for the request means the server was alive when its client went away — the
// kubelet did not cut it. Measured on the real node (issue 21): kube-apiserver SIGKILLed ~1 s into
// terminating; the watch dropped (ECONNRESET), the server logged `aborted` 145 ms later, before the
// preStop hook began, and with nothing in flight drained and exited 0.
import type { TransportEvent } from '../observation/schema.ts';
import { wasInterrupted } from '../observation/incomplete.ts';
import { proxyLeftFirst } from './containers.ts';
import { describeLine, type LabLine } from './sources.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

export type LostPath = { kind: 'lost'; reason: string } | { kind: 'contradiction'; reason: string };

/** WebSocket close codes a peer sends on purpose; anything else (1006, none) is a cut. */
const CLEAN_CLOSE_CODES = new Set([1000, 1005]);

const lostOnTransport = (e: TransportEvent) =>
  (e.event === 'error' && (e.detail ?? '').replace(/^error channel:\s*/, '') !== '') ||
  (e.event === 'closed' && e.by === 'remote' && !CLEAN_CLOSE_CODES.has(e.code ?? -1));

/**
 * The first loss of the request's path that came before the request ended: a forward cut after the
 * request had already ended (the kill cut it first, then the API went) lost nothing of it.
 */
function firstLoss({ o, timeline }: Facts): TransportEvent | null {
  const ended = timeline.requestEnded?.at.mono ?? Infinity;
  return o.evidence.transport.find((e) => lostOnTransport(e) && e.at.mono <= ended) ?? null;
}

const seconds = (s: number) => `${s.toFixed(2)} s`;

/**
 * The container's wall clock against the harness's: the smallest (received − written) over the
 * log lines. It is the skew plus the shortest delivery delay, so a container time plus it is never
 * before the harness could have seen it.
 */
function containerToHarnessWallMs({ o }: Facts, lines: readonly LabLine[]): number | null {
  let best: number | null = null;
  for (const l of lines) {
    const received = wallMs(o.evidence.logLines[l.line]?.receivedAt.wall ?? '');
    const written = wallMs(l.time);
    if (!Number.isFinite(received) || !Number.isFinite(written)) continue;
    const d = received - written;
    if (best === null || d < best) best = d;
  }
  return best;
}

/** Seconds after the delete was issued for a harness wall time; null without a delete. */
function sinceDeleteWall(f: Facts, atMs: number): number | null {
  const issued = f.timeline.deleteIssued;
  return issued ? (atMs - wallMs(issued.at.wall)) / 1000 : null;
}

/** Where the loss falls among the termination steps the server logged (one clock: the container's wall). */
function stepOf(lossMs: number, lines: readonly LabLine[], { o, timeline }: Facts, sinceDelete: number | null): string {
  const hook = lines.find((l) => l.event === 'hook-start');
  const term = lines.find((l) => l.event === 'signal');
  // A delete the API took only after an outage can come after the loss (seen on the node: the request lost at -7.38 s).
  if (!timeline.deleteIssued || (sinceDelete !== null && sinceDelete < 0)) return 'before the delete was issued';
  if (hook && lossMs < wallMs(hook.time)) return 'before the preStop hook began';
  if (!hook && term && lossMs < wallMs(term.time))
    return o.scenario.preStop.kind === 'none' ? 'before TERM' : 'before TERM (no hook line was logged)';
  if (hook && (!term || lossMs < wallMs(term.time))) return 'while the preStop hook ran';
  if (term) return 'after TERM, while the server was still alive';
  return 'while the server was still alive';
}

/** "the API server was unreachable from 2.30 s to 5.90 s", for each watch gap near the loss. */
function outages({ o, timeline }: Facts, nearMono: number | null): string[] {
  const issued = timeline.deleteIssued?.at.mono;
  const rel = (mono: number) =>
    issued === undefined ? `${seconds(mono / 1000)} into the run` : seconds((mono - issued) / 1000);
  const life = o.evidence.watchLifecycle;
  const found: string[] = [];
  for (const [i, w] of life.entries()) {
    if (w.event !== 'dropped') continue;
    const end = life
      .slice(i + 1)
      .find((x) => x.event === 'resumed' || x.event === 'expired-relisted' || x.event === 'gave-up');
    // Only the gaps that can explain this loss: open at it, or within a second of it.
    if (nearMono !== null && (w.at.mono > nearMono + 1000 || (end && end.at.mono < nearMono - 1000))) continue;
    found.push(
      end
        ? `the API server was unreachable from ${rel(w.at.mono)} to ${rel(end.at.mono)}${end.event === 'gave-up' ? ' (the watch gave up)' : ''}`
        : `the API server was unreachable from ${rel(w.at.mono)} on`,
    );
  }
  return found;
}

function transportText(f: Facts, e: TransportEvent): string {
  const rel = f.timeline.deleteIssued
    ? seconds((e.at.mono - f.timeline.deleteIssued.at.mono) / 1000)
    : `${seconds(e.at.mono / 1000)} into the run`;
  const what =
    e.event === 'error'
      ? `errored (${e.detail ?? 'no detail'})`
      : `was closed by the remote side ${e.code === undefined || e.code === null ? 'without a close code' : `with code ${e.code}`}`;
  return `the port-forward's connection ${e.connection} ${what} at ${rel}`;
}

/** The lost path of this run's request, if any; or a contradiction a hand edit leaves. */
export function lostPath(f: Facts): LostPath | null {
  const r = f.o.request;
  if (r.outcome === 'completed' || r.outcome === 'rejected') return null;
  const lines = f.lab;
  const mine = lines.filter((l) => l.fields.id === r.id);
  const aborted = mine.find((l) => l.event === 'aborted');
  const accepted = mine.find((l) => l.event === 'accepted');
  const term = lines.find((l) => l.event === 'signal');
  const transportLoss = firstLoss(f);
  const interrupted = wasInterrupted(f.o.run);

  // A sidecar proxy that exited first was the app's client: its going is the kill's, not a lost path (containers.ts).
  if (aborted && proxyLeftFirst(f, aborted)) return null;
  if (aborted) {
    const abortedMs = wallMs(aborted.time);
    if (accepted && abortedMs < wallMs(accepted.time))
      return {
        kind: 'contradiction',
        reason: `${describeLine(aborted)} has request ${r.id} aborted before ${describeLine(accepted)} accepted it`,
      };
    // Nothing in flight at TERM: a graceful server drains at once and exits 0, so a kill at the end of the grace is not what followed.
    if (f.o.scenario.mode === 'graceful' && term && abortedMs < wallMs(term.time) && f.o.finalState?.exitCode === 137) {
      return {
        kind: 'contradiction',
        reason: `${describeLine(aborted)} says the server lost request ${r.id} before TERM (${describeLine(term)}), so nothing was in flight and it would have drained and exited 0; yet the container was killed (137)`,
      };
    }
    const offset = containerToHarnessWallMs(f, lines);
    const lossWall = offset === null ? null : abortedMs + offset;
    const at = lossWall === null ? null : sinceDeleteWall(f, lossWall);
    const issuedMono = f.timeline.deleteIssued?.at.mono ?? null;
    const nearMono =
      at !== null && issuedMono !== null
        ? issuedMono + at * 1000
        : (transportLoss?.at.mono ?? f.timeline.requestEnded?.at.mono ?? null);
    const why = [
      transportLoss ? transportText(f, transportLoss) : null,
      ...outages(f, nearMono),
      interrupted ? `the run was ${f.o.run.incompleteReason}` : null,
    ].filter(Boolean);
    return {
      kind: 'lost',
      reason: `the connection to the pod was lost${at === null ? '' : ` at ${seconds(at)}`}, ${stepOf(abortedMs, lines, f, at)} (${describeLine(aborted)}: the server saw its client go while alive, so the kubelet did not cut it)${why.length ? `; ${why.join('; ')}` : ''}: this run says nothing about the grace; run it again`,
    };
  }
  if (interrupted)
    return {
      kind: 'lost',
      reason: `the run was ${f.o.run.incompleteReason}: the harness's own abort ended the request, not the kubelet`,
    };
  if (r.outcome === 'transport-failed' && !f.timeline.requestAccepted) {
    return {
      kind: 'lost',
      reason: `the request never reached the server (${r.errorCode ?? 'no code'}): nothing was in flight, so neither the outcome nor the exit code says anything about the grace`,
    };
  }
  // No word from the server. A whole log would hold an `aborted` line had the server seen its
  // client go: a loss the server never saw came with the container's end (the kill cut the path).
  // An API outage cuts the log stream too, and what the harness read again after it may not be
  // all (on the node, containerd had removed the log: "unable to retrieve container logs").
  const logWhole = f.logComplete;
  if (transportLoss && !logWhole) {
    return {
      kind: 'lost',
      reason: `${transportText(f, transportLoss)}${outages(f, transportLoss.at.mono)
        .map((x) => `; ${x}`)
        .join('')}, and the container log is not whole, so nothing places the loss after the kill: run it again`,
    };
  }
  return null;
}

/**
 * The outcome a report shows: `interrupted` for a request the run's own stop ended (Ctrl-C, SIGTERM: the
 * lost path is the interrupt's), never `cut` as if the kubelet had cut it; the request's recorded outcome otherwise.
 */
export function shownOutcome(f: Facts, lost: LostPath | null): string {
  const r = f.o.request;
  const inFlight = r.outcome === 'cut' || r.outcome === 'transport-failed';
  return inFlight && lost?.kind === 'lost' && wasInterrupted(f.o.run) ? 'interrupted' : r.outcome;
}

/** The evidence check: a lost-path claim that contradicts the server's own lines is invalid. */
export function lostPathCheck(f: Facts): Check {
  const id = 'evidence.lost-path';
  const lost = lostPath(f);
  if (lost?.kind === 'contradiction') return fail(id, lost.reason);
  if (lost?.kind === 'lost') return inconclusive(id, lost.reason);
  const transportLoss = firstLoss(f);
  if (transportLoss && (f.o.request.outcome === 'cut' || f.o.request.outcome === 'transport-failed')) {
    return pass(
      id,
      `${transportText(f, transportLoss)}, but the server never logged losing request ${f.o.request.id} and its log is whole: the container's end cut the path`,
    );
  }
  return pass(
    id,
    f.o.evidence.transport.length ? "the request's path held until its outcome was decided" : 'no lost path on record',
  );
}

/** Outcome checks under a lost path: none of them may grade the kubelet on the harness's loss. */
export function underLostPath(f: Facts, checks: Check[]): Check[] {
  const lost = lostPath(f);
  if (lost?.kind !== 'lost') return checks;
  return checks.map((c) => {
    if (c.id === 'outcome.request') return inconclusive(c.id, lost.reason);
    // An exit code that agrees stays a pass; one that differs follows from what was (not) in flight.
    if ((c.id === 'outcome.exit-code' || c.id === 'attribution.exit-code') && c.status !== 'pass')
      return inconclusive(c.id, `${c.reason}; but ${lost.reason}`);
    return c;
  });
}
