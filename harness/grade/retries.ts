// Grading a retry scenario (issue 27): the client's attempts, each pod's own log and the ledger's log,
// each against the others, then the attempts and the effect count against the retries model, and the
// cause told in one sentence with times. A claim of one effect is checked against the ledger's records
// and every server's effect lines: a hand-edited count or a removed attempt is evidence invalid.
import { type Attempt, type Retries, ROUTE_UNREAD, routeCandidates } from '../observation/retries.ts';
import { type LabLine, parseLabLogLines, parseLogLineJson } from '../observation/timeline.ts';
import { type LedgerLineOf, parseLedgerLine } from '../../server/contract-schemas.ts';
import type { Facts } from './facts.ts';
import { anchor } from './kubelet-times.ts';
import { requestRecordProblem } from './request-evidence.ts';
import { predictRetries, type RetryPrediction, withEffectEarlier } from './retry-theory.ts';
import type { Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check, type RetrySummary } from './types.ts';
import { wallMs } from './wall-time.ts';

type LedgerEffect = LedgerLineOf<'applied'> | LedgerLineOf<'already-applied'>;

interface RetryFacts {
  r: Retries;
  attempts: Attempt[];
  /** The deleted pod's lines and the standby's, parsed as the lab's. */
  deleted: readonly LabLine[];
  standby: readonly LabLine[];
  ledger: { effects: (LedgerEffect & { index: number })[]; malformed: string[] };
  uids: { deleted: string | null; standby: string | null };
  /** Version 7 on: each retry went through the Service both lab pods stand behind, its route recorded. */
  routed: boolean;
}

/** The ledger's effect lines as its own log has them (the fidelity summary counts from these too). */
export function ledgerLines(r: Retries): RetryFacts['ledger'] {
  const effects: RetryFacts['ledger']['effects'] = [];
  const malformed: string[] = [];
  (r.ledger?.logLines ?? []).forEach((l, index) => {
    const parsed = parseLedgerLine(parseLogLineJson(l.text));
    if (parsed.kind === 'malformed') malformed.push(`line ${index} (${parsed.event}): ${parsed.problem}`);
    if (parsed.kind === 'event' && (parsed.event === 'applied' || parsed.event === 'already-applied'))
      effects.push({ ...(parsed.line as LedgerEffect), index });
  });
  return { effects, malformed };
}

function retryFacts(f: Facts, fileVersion: number): RetryFacts | null {
  const r = f.o.retries;
  if (!r) return null;
  return {
    r,
    attempts: r.attempts,
    deleted: f.lab,
    standby: parseLabLogLines(r.standby?.logLines ?? []).lines,
    ledger: ledgerLines(r),
    uids: { deleted: f.o.pod?.uid ?? null, standby: r.standby?.uid ?? null },
    routed: fileVersion >= 7,
  };
}

/**
 * A retry's route against the rule it claims to follow: read after the backoff and before the send, the
 * Service's endpoints only the two lab pods, the pick one kube-proxy could make, and the attempt sent to
 * the pod picked (or, with none to pick, not sent, and the last attempt).
 */
function routeProblem(a: Attempt, prev: Attempt, x: RetryFacts, backoffMs: number): string | null {
  const route = a.route;
  if (!x.r.service) return 'was sent through a Service the file does not record (retries.service)';
  if (!route) return "records no route: this file's version routes each retry through the retry Service";
  if (prev.ended && route.read.mono < prev.ended.mono + backoffMs - 1)
    return `read its route ${Math.round(route.read.mono - prev.ended.mono)} ms after attempt ${prev.n} ended, inside the ${backoffMs} ms backoff`;
  if (a.sent && a.sent.mono < route.read.mono)
    return `was sent at ${Math.round(a.sent.mono)} ms, before its route was read (${Math.round(route.read.mono)} ms)`;
  const ours = new Set([x.uids.deleted, x.uids.standby].filter((u) => u !== null));
  const stray = route.endpoints.find((e) => e.uid === null || !ours.has(e.uid));
  if (stray)
    return `lists endpoint ${stray.pod ?? '(no pod)'} (uid ${stray.uid ?? 'none'}) in its route, which is neither lab pod: the Service selects those two alone`;
  const candidates = routeCandidates(route.endpoints);
  if (route.chosen === null) {
    if (candidates.length)
      return `records no pick, though its route lists ${candidates.map((e) => e.pod).join(', ')} to take it`;
    if (a.outcome !== 'not-sent' || a.sent) return 'had no endpoint to take it, yet is recorded as sent';
    if (a !== x.attempts.at(-1)) return 'had no endpoint to take it, yet later attempts are recorded';
    return null;
  }
  if (!candidates.some((e) => e.uid === route.chosen))
    return `was routed to pod ${route.chosen}, which its route lists as ${route.endpoints.some((e) => e.uid === route.chosen) ? 'neither ready nor serving-terminating while another was' : 'no endpoint at all'}`;
  const target = route.chosen === x.uids.deleted ? 'deleted' : 'standby';
  if (a.target !== target)
    return `is recorded as sent to the ${a.target} pod, but its route picked the ${target} one (${route.chosen})`;
  return null;
}

/** The ledger and the lab pods are separate processes, on one node in the lab: their wall clocks agree to well within this. */
const LEDGER_CLOCK_SLACK_MS = 50;
/** time and mono of one line come from one reading, to the millisecond of the ISO time. */
const SAME_CLOCK_SLACK_MS = 2;
const REQUEST_FIELDS = [
  'id',
  'status',
  'bytes',
  'sha256',
  'done',
  'doneSeen',
  'podUid',
  'errorCode',
  'outcome',
] as const;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const retryReason = (a: Attempt): 'cut' | 'rejected' | '5xx' | null =>
  a.outcome === 'cut'
    ? 'cut'
    : a.outcome === 'rejected'
      ? 'rejected'
      : a.status !== null && a.status >= 500 && a.status !== 503
        ? '5xx'
        : null;

/** evidence.retry-attempts: the attempts against the request, the policy and each pod's own log. */
function attemptsCheck(f: Facts, x: RetryFacts): Check {
  const id = 'evidence.retry-attempts';
  const policy = f.o.scenario.retry!;
  const { attempts } = x;
  const first = attempts[0];
  if (!first) {
    return f.o.timeline.requestSent
      ? fail(id, 'the file records no attempt, though the request was sent')
      : inconclusive(
          id,
          `no attempt was sent: the run ended before its request${f.o.run.complete ? '' : ' (it was interrupted)'}`,
        );
  }
  const req = f.o.request;
  const t = f.o.timeline;
  for (const field of REQUEST_FIELDS)
    if (!same(first[field], req[field]))
      return fail(
        id,
        `attempt 1's ${field} (${JSON.stringify(first[field])}) is not the request's (${JSON.stringify(req[field])})`,
      );
  if (
    !same(first.sent, t.requestSent?.at ?? null) ||
    !same(first.accepted, t.requestAccepted?.at ?? null) ||
    !same(first.ended, t.requestEnded?.at ?? null)
  )
    return fail(id, "attempt 1's times are not the timeline's request sent, accepted and ended");
  if (first.target !== 'deleted') return fail(id, 'attempt 1 went to the standby, not the pod the scenario deletes');
  if (attempts.length > policy.attempts)
    return fail(id, `${attempts.length} attempts recorded; the policy allows ${policy.attempts}`);
  for (const [i, a] of attempts.entries()) {
    if (a.n !== i + 1) return fail(id, `attempt ${i + 1} is numbered ${a.n}`);
    if ((a.key !== null) !== policy.idempotencyKey || a.key !== first.key)
      return fail(
        id,
        `attempt ${a.n}'s idempotency key (${JSON.stringify(a.key)}) is not the policy's (${policy.idempotencyKey ? `attempt 1's ${JSON.stringify(first.key)}` : 'none'})`,
      );
    const uid = a.target === 'deleted' ? x.uids.deleted : x.uids.standby;
    if (a.podUid !== null && a.podUid !== uid)
      return fail(id, `attempt ${a.n} was answered by pod ${a.podUid}, not the ${a.target} pod ${uid}`);
    if (i === 0) {
      if (a.route)
        return fail(
          id,
          "attempt 1 records a route through the retry Service; it goes to the deleted pod itself, as every scenario's request",
        );
      continue;
    }
    const prev = attempts[i - 1]!;
    // The harness lost the API while reading the retry's route: nothing after it was observed, nothing to blame.
    if (
      x.routed &&
      !a.route &&
      a.outcome === 'not-sent' &&
      !a.sent &&
      a.errorCode === ROUTE_UNREAD &&
      a === attempts.at(-1)
    ) {
      return inconclusive(
        id,
        `attempt ${a.n} was not sent: the harness could not read the retry Service's endpoints (it lost the API), so what a retry would have done is unknown`,
      );
    }
    const routed = x.routed
      ? routeProblem(a, prev, x, policy.backoffMs)
      : a.target !== 'standby'
        ? `went to the deleted pod; a retry of this file's version goes to the standby`
        : null;
    if (routed) return fail(id, `attempt ${a.n} ${routed}`);
    const reason = retryReason(prev);
    if (!reason || !policy.on.includes(reason))
      return fail(
        id,
        `attempt ${a.n} was sent though attempt ${prev.n} ended ${prev.outcome}, which the policy (on: ${policy.on.join(', ')}) does not retry`,
      );
    const unsent = x.routed && a.route?.chosen === null;
    if (!unsent && (!a.sent || !prev.ended || a.sent.mono < prev.ended.mono + policy.backoffMs - 1))
      return fail(
        id,
        `attempt ${a.n} was sent ${a.sent && prev.ended ? `${Math.round(a.sent.mono - prev.ended.mono)} ms` : 'at no time'} after attempt ${prev.n} ended; the backoff is ${policy.backoffMs} ms`,
      );
  }
  const standbyClock = clockProblem(x.standby, "the standby pod's");
  if (standbyClock) return fail(id, standbyClock);
  for (const a of attempts.slice(1)) {
    const problem = attemptRecordProblem(a);
    if (problem) return fail(id, `attempt ${a.n} ${problem}`);
  }
  const last = attempts.at(-1)!;
  const lastReason = retryReason(last);
  if (lastReason && policy.on.includes(lastReason) && attempts.length < policy.attempts && f.o.run.complete) {
    return fail(
      id,
      `attempt ${last.n} ended ${last.outcome}, which the policy retries, and ${policy.attempts} attempts are allowed, yet no attempt ${last.n + 1} is recorded`,
    );
  }
  // Each pod's log against the attempts sent to it: a removed attempt leaves its pod's accepted line behind.
  for (const [target, lines] of [
    ['deleted', x.deleted],
    ['standby', x.standby],
  ] as const) {
    const sent = new Map(attempts.filter((a) => a.target === target).map((a) => [a.id, a]));
    for (const line of lines.filter((l) => l.event === 'accepted')) {
      if (!sent.has(line.fields.id ?? ''))
        return fail(
          id,
          `the ${target} pod's log accepted request ${line.fields.id} (line ${line.line}), which no recorded attempt sent`,
        );
    }
    for (const a of sent.values()) {
      const seenAccepted = lines.some((l) => l.event === 'accepted' && l.fields.id === a.id);
      if (a.accepted && !seenAccepted && (target === 'standby' ? !(x.r.standby?.logEndedEarly ?? true) : f.logComplete))
        return fail(
          id,
          `attempt ${a.n} (${a.id}) was accepted, but the ${target} pod's whole log has no accepted line for it`,
        );
      const completed = lines.find((l) => l.event === 'completed' && l.fields.id === a.id);
      if (a.outcome === 'completed' && completed && completed.fields.bytes !== a.bytes)
        return fail(
          id,
          `attempt ${a.n} read ${a.bytes} bytes; the ${target} pod's completed line says ${completed.fields.bytes}`,
        );
      if (target === 'standby' && a.outcome === 'completed' && !completed && !(x.r.standby?.logEndedEarly ?? true))
        return fail(id, `attempt ${a.n} completed, but the standby's whole log has no completed line for it`);
      if (a.outcome !== 'completed' && completed && a.doneSeen && a.bytes === completed.fields.bytes)
        return fail(
          id,
          `attempt ${a.n} is recorded as ${a.outcome}, but the client saw the done line and read the ${a.bytes} bytes that the ${target} pod's completed line (line ${completed.line}) says it wrote`,
        );
      const accepted = lines.find((l) => l.event === 'accepted' && l.fields.id === a.id);
      if (a.outcome === 'rejected' && accepted)
        return fail(
          id,
          `attempt ${a.n} is recorded as rejected, but the ${target} pod's log accepted it (line ${accepted.line})`,
        );
    }
  }
  return pass(
    id,
    `${attempts.length} attempt(s), each the policy's (${policy.on.join(', ')}; ${policy.backoffMs} ms backoff; ${policy.idempotencyKey ? `key ${first.key}` : 'no key'}), each in its pod's own log`,
  );
}

/**
 * A retry's own record against itself: the request record's checks (evidence.request-record's), then its own
 * times in order, which the first request keeps on the timeline instead. Null when it holds together.
 */
function attemptRecordProblem(a: Attempt): string | null {
  const own = requestRecordProblem(a);
  if (own) return own;
  const times = [a.sent, a.accepted, a.ended].filter((t) => t !== null);
  if (a.outcome !== 'not-sent' && !a.sent) return `is recorded as ${a.outcome}, but was never sent`;
  for (let i = 1; i < times.length; i++)
    if (times[i]!.mono < times[i - 1]!.mono)
      return `has its sent, accepted and ended times out of order (${times.map((t) => Math.round(t.mono)).join(', ')} ms)`;
  return null;
}

/**
 * A lab process stamps each line's time as its clock's origin plus the line's mono (server/events.ts
 * clockNow), so every line of one process keeps one offset between the two: a line moved by hand does not.
 */
function clockProblem(lines: readonly { time: unknown; mono: unknown }[], whose: string): string | null {
  let origin: number | null = null;
  for (const [i, l] of lines.entries()) {
    if (typeof l.time !== 'string' || typeof l.mono !== 'number') continue;
    const offset = wallMs(l.time) - l.mono;
    origin ??= offset;
    if (Math.abs(offset - origin) > SAME_CLOCK_SLACK_MS)
      return `${whose} line ${i} is stamped ${l.time} at mono ${l.mono}, ${Math.round(offset - origin)} ms off the clock its other lines keep`;
  }
  return null;
}

/** The ledger's count from its own lines. */
/** The ledger's applied records and already-applied answers, from its effect lines (the fidelity summary counts the same). */
export const ledgerEffectCount = (ledger: RetryFacts['ledger']) => ({
  applied: ledger.effects.filter((e) => e.event === 'applied').length,
  alreadyApplied: ledger.effects.filter((e) => e.event === 'already-applied').length,
});
const countOf = (x: RetryFacts) => ledgerEffectCount(x.ledger);

/**
 * What a prediction's attempts and effects are held against: the attempts recorded and the ledger's applied
 * records from its own lines (null when its log ended early: a count no one can vouch for).
 */
export function observedRetries(o: Facts['o']): { attempts: number | null; effects: number | null } {
  const r = o.retries;
  if (!r) return { attempts: null, effects: null };
  const effects = !r.ledger ? 0 : r.ledger.logEndedEarly ? null : ledgerEffectCount(ledgerLines(r)).applied;
  return { attempts: r.attempts.length, effects };
}

/** evidence.ledger: the ledger's records against the file's count, the attempts and every server's effect lines. */
function ledgerCheck(f: Facts, x: RetryFacts): Check {
  const id = 'evidence.ledger';
  const { r } = x;
  const point = f.o.scenario.effect ?? 'none';
  if (!r.ledger)
    return point === 'none'
      ? pass(id, 'no effect, no ledger')
      : fail(id, 'the scenario makes an effect, but the file has no ledger');
  if (x.ledger.malformed.length)
    return fail(id, `a ledger line does not have the ledger's fields: ${x.ledger.malformed[0]}`);
  const ledgerClock = clockProblem(
    r.ledger.logLines.map((l) => (parseLogLineJson(l.text) ?? {}) as { time: unknown; mono: unknown }),
    "the ledger's",
  );
  if (ledgerClock) return fail(id, ledgerClock);
  // A ledger log cut short may hold fewer records than the ledger made: no count can be vouched for.
  if (r.ledger.logEndedEarly)
    return inconclusive(
      id,
      "the ledger's log ended before the ledger did: its records may be incomplete, so the effect count cannot be vouched for",
    );
  const count = countOf(x);
  if (!same(count, r.ledgerCount))
    return fail(
      id,
      `the file's ledger count (applied ${r.ledgerCount.applied}, already-applied ${r.ledgerCount.alreadyApplied}) is not the ledger's own lines' (applied ${count.applied}, already-applied ${count.alreadyApplied})`,
    );
  const byId = new Map(x.attempts.map((a) => [a.id, a]));
  const keys = new Map<string, number>();
  let seq = 0;
  for (const e of x.ledger.effects) {
    if (e.podUid !== undefined && e.podUid !== null && e.podUid !== r.ledger.uid)
      return fail(id, `ledger line ${e.index} was written in pod ${e.podUid}, not the ledger ${r.ledger.uid}`);
    const a = byId.get(e.id);
    if (!a) return fail(id, `the ledger recorded request ${e.id} (line ${e.index}), which no recorded attempt sent`);
    const uid = a.target === 'deleted' ? x.uids.deleted : x.uids.standby;
    if (e.fromPodUid !== uid)
      return fail(id, `the ledger says pod ${e.fromPodUid} made ${e.id}'s effect; attempt ${a.n} went to ${uid}`);
    if (e.key !== a.key)
      return fail(
        id,
        `the ledger recorded key ${JSON.stringify(e.key)} for ${e.id}; the attempt carried ${JSON.stringify(a.key)}`,
      );
    if (e.point !== point)
      return fail(id, `the ledger recorded an effect at the ${e.point}; the scenario's is at the ${point}`);
    if (e.event === 'applied') {
      if (e.seq !== ++seq)
        return fail(id, `ledger record ${e.seq} (line ${e.index}) breaks its numbering: record ${seq} was next`);
      if (e.key !== null && keys.has(e.key))
        return fail(
          id,
          `the ledger applied key ${e.key} twice (records ${keys.get(e.key)} and ${e.seq}): it answers a known key already-applied`,
        );
      if (e.key !== null) keys.set(e.key, e.seq);
    } else if (e.key === null || keys.get(e.key) !== e.seq)
      return fail(
        id,
        `ledger line ${e.index} answers already-applied with record ${e.seq}, which did not apply key ${JSON.stringify(e.key)}`,
      );
  }
  // Every server's effect line against the ledger: a ledger line removed leaves its server's answer behind.
  for (const [target, lines] of [
    ['deleted', x.deleted],
    ['standby', x.standby],
  ] as const) {
    for (const l of lines.filter((line) => line.event === 'effect')) {
      if (l.fields.result === 'failed') continue;
      const match = x.ledger.effects.find(
        (e) => e.id === l.fields.id && e.event === l.fields.result && e.seq === l.fields.seq,
      );
      if (!match)
        return fail(
          id,
          `the ${target} pod logged its effect for ${l.fields.id} ${l.fields.result} as record ${l.fields.seq} (line ${l.line}); the ledger's log has no such line`,
        );
      // The pod logs the ledger's answer after the ledger wrote it, and both happen inside the request's work.
      const accepted = lines.find((line) => line.event === 'accepted' && line.fields.id === l.fields.id);
      const done = lines.find((line) => line.event === 'completed' && line.fields.id === l.fields.id);
      if ((accepted && l.mono < accepted.mono) || (done && l.mono > done.mono))
        return fail(
          id,
          `the ${target} pod's effect line for ${l.fields.id} (line ${l.line}) is not between its accepted and completed lines`,
        );
      const answered = wallMs(match.time);
      if (
        answered > wallMs(l.time) + LEDGER_CLOCK_SLACK_MS ||
        (accepted && answered < wallMs(accepted.time) - LEDGER_CLOCK_SLACK_MS)
      )
        return fail(
          id,
          `ledger line ${match.index} records ${l.fields.id} at ${match.time}, outside the ${target} pod's request (accepted ${accepted?.time ?? 'unknown'}, the ledger's answer logged ${l.time})`,
        );
    }
  }
  for (const e of x.ledger.effects) {
    const a = byId.get(e.id)!;
    const lines = a.target === 'deleted' ? x.deleted : x.standby;
    if (lines.some((l) => l.event === 'effect' && l.fields.id === e.id)) continue;
    // The kill can land between the ledger's answer and the app's line; a pod that lived says what it was answered.
    const killed = a.target === 'deleted' && f.o.finalState?.exitCode === 137;
    const whole = a.target === 'deleted' ? f.logComplete : !(r.standby?.logEndedEarly ?? true);
    if (whole && !killed)
      return fail(
        id,
        `the ledger recorded ${e.id}'s effect (line ${e.index}), but the ${a.target} pod's whole log has no effect line for it`,
      );
  }
  const exit = (r.ledger.logLines ?? [])
    .map((l) => parseLogLineJson(l.text) as { event?: unknown; records?: unknown } | null)
    .find((j) => j?.event === 'exit');
  if (exit && exit.records !== count.applied)
    return fail(
      id,
      `the ledger's exit line says ${String(exit.records)} record(s); its log has ${count.applied} applied`,
    );
  return pass(
    id,
    `the ledger's ${count.applied} record(s) and ${count.alreadyApplied} already-applied answer(s) are the file's count, each from an attempt's pod with its key, each in that server's own effect line`,
  );
}

/**
 * The story's clock is the report's: seconds from the delete (negative before it), as the timeline draws them
 * (harness/grade/timeline.ts): a harness time by its monotonic reading, a server's line by its wall time.
 * A file with no delete counts from attempt 1's sending instead, and says so.
 */
function storyClock(
  f: Facts,
  first: Attempt,
): {
  harness: (at: { mono: number; wall: string }) => string;
  wall: (time: string) => string;
  origin: string;
} {
  const secs = (s: number) => `${s.toFixed(2)} s`;
  const deleted = f.o.timeline.deleteIssued?.at;
  // A server's line against the delete on the servers' clock, as the model and the timeline place it.
  const serverDelete = anchor(f)?.deleteWallMs ?? (deleted ? wallMs(deleted.wall) : null);
  if (deleted && serverDelete !== null)
    return {
      harness: (at) => secs((at.mono - deleted.mono) / 1000),
      wall: (time) => secs((wallMs(time) - serverDelete) / 1000),
      origin: '',
    };
  const start = first.sent?.wall ?? f.o.run.observedAt;
  return {
    harness: (at) => secs((wallMs(at.wall) - wallMs(start)) / 1000),
    wall: (time) => secs((wallMs(time) - wallMs(start)) / 1000),
    origin: ' (times from attempt 1 being sent: the file has no delete)',
  };
}

/** How the Service routed a retry, for the story: empty for a file from before routes. */
function routeText(a: Attempt, x: RetryFacts): string {
  if (!a.route || !x.r.service) return '';
  const candidates = routeCandidates(a.route.endpoints);
  if (a.route.chosen === null) return ` found no endpoint of ${x.r.service.name} to take it and was not sent`;
  const why = !a.route.endpoints.some((e) => e.ready)
    ? 'serving though terminating: no endpoint was ready'
    : candidates.length === 1
      ? 'its only ready endpoint'
      : `picked at random from ${candidates.length} ready endpoints`;
  return ` (through ${x.r.service.name}: ${why})`;
}

function story(f: Facts, x: RetryFacts, model: RetryPrediction): { story: string; counterfactual: string | null } {
  const first = x.attempts[0]!;
  const clock = storyClock(f, first);
  const pods = {
    deleted: `pod A (${f.o.pod?.name ?? 'the deleted pod'})`,
    standby: `pod B (${x.r.standby?.name ?? 'the standby'})`,
  };
  const endOf = (a: Attempt) => (a.ended ? clock.harness(a.ended) : 'an unknown time');
  const effectOf = (a: Attempt) => x.ledger.effects.find((e) => e.id === a.id);
  const parts: string[] = [];
  for (const a of x.attempts) {
    const e = effectOf(a);
    const pod = pods[a.target];
    const made = e
      ? e.event === 'applied'
        ? `the effect ran at ${clock.wall(e.time)} on ${pod}`
        : `the ledger answered the effect from ${pod} at ${clock.wall(e.time)} already-applied (the same idempotency key)`
      : null;
    const how =
      a.outcome === 'cut'
        ? `was cut at ${endOf(a)}${a.target === 'deleted' && f.o.finalState?.exitCode === 137 ? ' by SIGKILL' : ''}`
        : `${a.outcome} at ${endOf(a)}`;
    if (a.n === 1)
      parts.push(
        `${made ? `${made}, ` : ''}attempt 1 ${how}${made ? '' : ` on ${pod}${f.o.scenario.effect === 'end' && a.outcome === 'cut' ? " before its work's end, where the effect is" : ''}`}`,
      );
    else {
      const who = `${a.n === 2 ? 'the retry' : `retry ${a.n - 1}`}${routeText(a, x)}`;
      if (a.route?.chosen === null) {
        parts.push(who);
        continue;
      }
      const end = a.outcome === 'completed' ? 'completed' : how;
      if (!e) parts.push(`${who} on ${pod} made no effect and ${end}`);
      else if (e.event === 'applied')
        parts.push(
          `${who} ran it ${x.ledger.effects.indexOf(e) > 0 ? 'again ' : ''}at ${clock.wall(e.time)} on ${pod} and ${end}`,
        );
      else
        parts.push(
          `${who} on ${pod} reached the ledger at ${clock.wall(e.time)} with the same idempotency key, was answered already-applied and ${end}`,
        );
    }
  }
  if (x.attempts.length === 1 && first.outcome === 'completed') parts.push('nothing to retry');
  const count = countOf(x);
  const told = `${parts.join(', ')}${clock.origin}: ${count.applied} effect(s) for one request${count.alreadyApplied ? `, ${count.alreadyApplied} answered already-applied` : ''}`;
  const earlier = withEffectEarlier(f.o.scenario, first.outcome === 'cut' ? 'cut' : 'completed');
  const counterfactual =
    earlier && earlier.effects !== model.effects
      ? `that is luck, not design: with the effect one line earlier (at the work's start) attempt 1 would have made it before the cut and the retry again, ${earlier.effects} effects`
      : null;
  return { story: counterfactual ? `${told}; ${counterfactual}` : told, counterfactual };
}

interface RetryGrade {
  evidence: Check[];
  outcome: Check[];
  summary: RetrySummary | null;
}

/** Every check of a retry scenario, and its summary; none for a scenario without a retry policy. */
export function retryChecks(f: Facts, model: Prediction, fileVersion: number): RetryGrade {
  const scenario = f.o.scenario;
  if (!scenario.retry) {
    return f.o.retries
      ? {
          evidence: [fail('evidence.retry-attempts', 'the file records retries for a scenario without a retry policy')],
          outcome: [],
          summary: null,
        }
      : { evidence: [], outcome: [], summary: null };
  }
  const x = retryFacts(f, fileVersion);
  if (!x)
    return {
      evidence: [
        fail(
          'evidence.retry-attempts',
          'the scenario retries, but the file has no retries record (attempts, standby, ledger)',
        ),
      ],
      outcome: [],
      summary: null,
    };
  const evidence = [attemptsCheck(f, x), ledgerCheck(f, x)];
  const predicted = predictRetries(scenario, model.outcome);
  const count = countOf(x);
  const observedFirst = x.attempts[0]?.outcome;
  const outcome: Check[] = [];
  const id = 'outcome.retries';
  const want = `${predicted.attempts.length} attempt(s) (${predicted.attempts.map((a) => `${a.n}: ${a.target} ${a.outcome}`).join(', ')}), ${predicted.effects} effect(s)${predicted.alreadyApplied ? `, ${predicted.alreadyApplied} already-applied` : ''}`;
  const got = `${x.attempts.length} attempt(s) (${x.attempts.map((a) => `${a.n}: ${a.target} ${a.outcome}`).join(', ')}), ${count.applied} effect(s)${count.alreadyApplied ? `, ${count.alreadyApplied} already-applied` : ''}`;
  const unread = x.attempts.at(-1);
  if (x.routed && unread && unread.n > 1 && !unread.route && unread.errorCode === ROUTE_UNREAD) {
    outcome.push(
      inconclusive(
        id,
        `attempt ${unread.n}'s route could not be read (the harness lost the API): the retries stop there, unobserved: ${got}`,
      ),
    );
  } else if (x.routed && unread && unread.n > 1 && unread.route?.chosen === null) {
    // The lab's precondition (the standby ready behind the Service) failed, not the app: nothing to grade it by.
    outcome.push(
      inconclusive(
        id,
        `attempt ${unread.n} found no endpoint of the retry Service to take it (the standby was not ready in its slice), so it was not sent: ${got}`,
      ),
    );
  } else if (observedFirst !== model.outcome) {
    // The retries follow from the first attempt's fate, which outcome.request grades.
    outcome.push(
      inconclusive(
        id,
        `the retries follow from attempt 1, which was ${observedFirst ?? 'not sent'} where the model says ${model.outcome}: ${got}`,
      ),
    );
  } else {
    const differs =
      x.attempts.length !== predicted.attempts.length ||
      x.attempts.some(
        (a, i) => a.target !== predicted.attempts[i]?.target || a.outcome !== predicted.attempts[i]?.outcome,
      ) ||
      count.applied !== predicted.effects ||
      count.alreadyApplied !== predicted.alreadyApplied;
    outcome.push(
      differs ? fail(id, `the model says ${want}; the run made ${got}`) : pass(id, `${got}, as the model says`),
    );
  }
  const told = x.attempts.length ? story(f, x, predicted) : { story: 'no attempt was sent', counterfactual: null };
  if (evidence.every((c) => c.status === 'pass')) outcome.push(pass('attribution.effects', told.story));
  return {
    evidence,
    outcome,
    summary: {
      idempotencyKey: scenario.retry.idempotencyKey,
      effect: scenario.effect ?? 'none',
      attempts: x.attempts.map((a) => ({ n: a.n, target: a.target, podUid: a.podUid, outcome: a.outcome })),
      effects: count.applied,
      alreadyApplied: count.alreadyApplied,
      predicted: {
        attempts: predicted.attempts.length,
        effects: predicted.effects,
        alreadyApplied: predicted.alreadyApplied,
      },
      story: told.story,
      counterfactual: told.counterfactual,
    },
  };
}
