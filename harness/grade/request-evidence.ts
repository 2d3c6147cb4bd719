// The request, cross-examined: the client's record (status, bytes, sha256, done line, times), the
// server's own log lines for the same request id, and the pod UID the server answered with.
import { lostPath } from './lost-path.ts';
import { observedDeadline } from './deadline.ts';
import { describeLine, type LabLine } from './sources.ts';
import { TOLERANCE_SECONDS } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import type { RequestRecord } from '../observation/parts.ts';

/** The lab server writes a progress line this often while it works (server/app.ts). */
const PROGRESS_INTERVAL_MS = 250;
/** Room for a progress line: event, the request id (at most 64 characters) and elapsed ms. */
const PROGRESS_LINE_MAX_BYTES = 64 + 64 + 16;
/** The accepted line: event, id, ms, pod UID, wall and monotonic times. */
const ACCEPTED_LINE_MAX_BYTES = 400;
/** The harness sees the body end a little after the server's timer; never before it. */
const CLOCK_SLACK_MS = 5;

/** The most bytes a body of this much work can hold before its done line. */
function maxBodyBytes(workMs: number): number {
  return ACCEPTED_LINE_MAX_BYTES + (Math.floor(workMs / PROGRESS_INTERVAL_MS) + 1) * PROGRESS_LINE_MAX_BYTES;
}

function requestLines({ o, lab }: Facts): Map<string, LabLine[]> {
  const byEvent = new Map<string, LabLine[]>();
  for (const l of lab) {
    if (l.fields.id !== o.request.id) continue;
    byEvent.set(l.event, [...(byEvent.get(l.event) ?? []), l]);
  }
  return byEvent;
}

/**
 * One request record's fields against each other, the first request's or a retry attempt's (an attempt is the
 * request's record extended): its status for its outcome, its done line against what it read, and a done line
 * seen as its outcome says. Null when they hold together, else the problem, to follow its subject ("the request").
 * `doneRecorded` is false for a version 1 file, which recorded no done line.
 */
export function requestRecordProblem(r: RequestRecord, doneRecorded = true): string | null {
  if ((r.outcome === 'completed' || r.outcome === 'cut') && r.status !== 200)
    return `is recorded as ${r.outcome} with HTTP status ${r.status}`;
  if (r.outcome === 'rejected' && r.status !== 503)
    return `is recorded as rejected with HTTP status ${r.status}, not 503`;
  if (doneRecorded && r.done && r.doneSeen !== (r.done.bytes === r.bytes && r.done.sha256 === r.sha256)) {
    return `has doneSeen ${r.doneSeen}, but its done line says ${r.done.bytes} bytes / ${r.done.sha256.slice(0, 12)}… and the client read ${r.bytes} / ${(r.sha256 ?? 'none').slice(0, 12)}…`;
  }
  if (doneRecorded && !r.done && r.doneSeen) return 'has doneSeen true, but the client recorded no done line';
  if (r.outcome === 'completed' && !r.doneSeen)
    return 'is recorded as completed, but no done line vouching for its bytes was seen';
  // A 503 is answered before any work, so it never carries a done line either.
  if ((r.outcome === 'cut' || r.outcome === 'rejected') && r.doneSeen)
    return `is recorded as ${r.outcome}, but a done line vouching for its bytes was seen`;
  return null;
}

function requestRecord(f: Facts, fileVersion: number): Check {
  const id = 'evidence.request-record';
  const r = f.o.request;
  const t = f.timeline;
  const lines = requestLines(f);
  const logIsWhole = f.logComplete;
  const accepted = lines.get('accepted')?.[0];
  const completed = lines.get('completed')?.[0];
  const aborted = lines.get('aborted')?.[0];
  const rejected = lines.get('rejected')?.[0];
  if (t.requestAccepted && !accepted && logIsWhole)
    return fail(id, `the harness saw request ${f.o.request.id} accepted, but the server never logged accepting it`);
  if (completed && completed.fields.ms !== f.o.scenario.workMs)
    return fail(
      id,
      `${describeLine(completed)} says ${String(completed.fields.ms)} ms of work, the scenario says ${f.o.scenario.workMs} ms`,
    );
  if (accepted && accepted.fields.ms !== f.o.scenario.workMs)
    return fail(
      id,
      `${describeLine(accepted)} says the server was asked for ${String(accepted.fields.ms)} ms of work, the scenario says ${f.o.scenario.workMs} ms`,
    );
  if (r.bytes > maxBodyBytes(f.o.scenario.workMs))
    return fail(
      id,
      `the client read ${r.bytes} bytes, more than ${maxBodyBytes(f.o.scenario.workMs)} that ${f.o.scenario.workMs} ms of work can write`,
    );
  // The record against itself: its status, done line and outcome (a retry attempt's are checked the same way).
  const own = requestRecordProblem(r, fileVersion >= 2);
  if (own) return fail(id, `the request ${own}`);
  if ((r.outcome === 'completed' || r.outcome === 'cut') && (!t.requestEnded || !t.requestAccepted))
    return fail(id, `the request is recorded as ${r.outcome}, but its acceptance or end is not on the timeline`);
  switch (r.outcome) {
    case 'completed': {
      if (completed && completed.fields.bytes !== r.bytes)
        return fail(
          id,
          `the client read ${r.bytes} bytes, ${describeLine(completed)} says the server wrote ${String(completed.fields.bytes)}`,
        );
      // Killed as it finished: the server logs its completion once the done line is handed to the kernel, so
      // a SIGKILL between the two leaves the client whole and the log without the line (check:model, 1 of 240
      // combinations, the kill 0.03 s from the work's end). Never a pass: the end cannot be called.
      const killedAsItFinished =
        !completed &&
        logIsWhole &&
        f.o.finalState?.exitCode === 137 &&
        t.containerTerminated !== null &&
        t.requestEnded!.at.mono <= t.containerTerminated.at.mono;
      if (!completed && logIsWhole && !killedAsItFinished)
        return fail(id, 'the request is recorded as completed, but the server never logged completing it');
      if (aborted)
        return fail(
          id,
          `the request is recorded as completed, but ${describeLine(aborted)} says the server saw it aborted`,
        );
      if (accepted && completed && completed.mono - accepted.mono < f.o.scenario.workMs - CLOCK_SLACK_MS)
        return fail(
          id,
          `${describeLine(completed)} comes ${Math.round(completed.mono - accepted.mono)} ms after ${describeLine(accepted)}, less than the ${f.o.scenario.workMs} ms of work`,
        );
      // The server exits only once its last response is flushed: the client cannot see the end long after the
      // container's, unless over a port-forward the server's own log orders the completion before its exit: the
      // last bytes were still in the relay (under load on the real node, 2.3 s after the server wrote them).
      const exited = f.lab.find((l) => l.event === 'exit');
      const relayed = f.o.run.transport === 'portforward';
      const flushedFirst = relayed && completed !== undefined && exited !== undefined && completed.mono <= exited.mono;
      if (
        t.containerTerminated &&
        !flushedFirst &&
        t.requestEnded!.at.mono > t.containerTerminated.at.mono + TOLERANCE_SECONDS * 1000
      ) {
        return fail(
          id,
          `the request ended ${((t.requestEnded!.at.mono - t.containerTerminated.at.mono) / 1000).toFixed(1)}s after the container was seen terminated (harness clock), but the server exits only after its last response is flushed`,
        );
      }
      // The server starts its work before the harness sees the acceptance, by at most the time since the send.
      const took = t.requestEnded!.at.mono - t.requestAccepted!.at.mono;
      const acceptLag = t.requestSent ? t.requestAccepted!.at.mono - t.requestSent.at.mono : 0;
      if (!t.requestSent) return fail(id, 'the request is recorded as completed, but it was never sent');
      if (took < f.o.scenario.workMs - CLOCK_SLACK_MS - acceptLag)
        return fail(
          id,
          `the request completed ${Math.round(took)} ms after its acceptance on the harness clock, less than its ${f.o.scenario.workMs} ms of work`,
        );
      if (killedAsItFinished)
        return inconclusive(
          id,
          'the request is recorded as completed and the container was killed (137) before the harness saw it end, but the server never logged completing it: the kill landed between its done line and its log line, or the record was edited; too close to call',
        );
      break;
    }
    case 'cut':
      // Before the delete only the pod's active deadline, once passed, starts a kill (deadline.ts places it).
      if (
        t.deleteIssued &&
        t.requestEnded!.at.mono < t.deleteIssued.at.mono &&
        !afterDeadline(f, t.requestEnded!.at.mono)
      ) {
        // The server's own word that its client went (lost-path.ts) explains an end before the delete: the harness lost it.
        const lost = lostPath(f);
        return lost?.kind === 'lost'
          ? inconclusive(id, lost.reason)
          : fail(id, 'the request is recorded as cut, but it ended before the delete was issued: nothing cut it');
      }
      if (completed)
        return inconclusive(
          id,
          `${describeLine(completed)} says the server finished the request, but the client saw no done line: lost on the way`,
        );
      break;
    case 'rejected':
      if (!rejected && logIsWhole)
        return fail(id, 'the request is recorded as rejected, but the server never logged rejecting it');
      if (accepted)
        return fail(
          id,
          `the request is recorded as rejected, but ${describeLine(accepted)} says the server accepted it`,
        );
      break;
  }
  return pass(
    id,
    `the client's record of the request (${r.outcome}, ${r.bytes} bytes) agrees with the server's log and the timeline`,
  );
}

function requestReachedPod(f: Facts): Check {
  const id = 'evidence.request-reached-pod';
  const uid = f.o.pod?.uid;
  if (!uid) return inconclusive(id, 'the live pod was never captured: no UID to compare with');
  if (f.o.request.status === null)
    return inconclusive(
      id,
      `the server never answered (${f.o.request.outcome}): nothing says which pod got the request`,
    );
  const lines = requestLines(f);
  const logged = lines.get('accepted')?.[0] ?? lines.get('rejected')?.[0];
  if (f.o.request.podUid !== null) {
    if (f.o.request.podUid !== uid)
      return fail(id, `the server answered as pod ${f.o.request.podUid}, but the live pod is ${uid}`);
    return pass(
      id,
      `the server answered as pod ${uid}${logged ? ` and ${describeLine(logged)} shows the request` : ''}`,
    );
  }
  // Version 1 files, and 503s, carry no header: the server's own log line for this request decides.
  if (logged && logged.fields.podUid === uid)
    return pass(id, `${describeLine(logged)} shows pod ${uid} handling request ${f.o.request.id}`);
  return inconclusive(id, 'neither the answer nor the container log says which pod handled the request');
}

export function requestChecks(f: Facts, fileVersion: number): Check[] {
  // Which pod answered comes first: a request that reached another pod explains everything after it.
  return [requestReachedPod(f), requestRecord(f, fileVersion)];
}

/** A harness time after the pod's active deadline passed, which came before the delete (placed on the harness clock from it). */
function afterDeadline(f: Facts, mono: number): boolean {
  const passesAt = observedDeadline(f)?.passesAt ?? null;
  const issued = f.timeline.deleteIssued;
  return passesAt !== null && passesAt < 0 && issued !== null && mono >= issued.at.mono + passesAt * 1000;
}
