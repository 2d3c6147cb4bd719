// The lab's pair exercise: the same work cut under a short grace, then completed once the grace is restored.
import { tooCloseToCall, tooCloseToDiffer } from './outcome.ts';
import { gradeStopSignalPair, type StopSignalPair } from './stop-signal-pair.ts';
import { pairVerdict, readyPair } from './pair-ready.ts';
import { type EdgePair, gradeEdgePair } from './edge/pair.ts';
import { inconclusive, type PairResult, runKeyOf, type GradeResult } from './types.ts';

export function gradePairs(results: GradeResult[]): PairResult[] {
  // Pairs are formed only within one run of one submission, never across students or runs.
  const byPair = new Map<
    string,
    { pairId: string; short?: GradeResult; restored?: GradeResult; invalid: Set<'short' | 'restored'> }
  >();
  const sidecarPairs = new Map<string, SidecarPair>();
  const retryPairs = new Map<string, RetryPair>();
  const stopSignalPairs = new Map<string, StopSignalPair>();
  const edgePairs = new Map<string, EdgePair>();
  for (const r of results) {
    // A superseded try (run again) never forms a pair: the last try of the same run does.
    if (!r.labPair || r.supersededBy) continue;
    if (r.labPair.role === 'no-key' || r.labPair.role === 'with-key') {
      const key = `${runKeyOf(r)}\0${r.labPair.id}`;
      const entry = retryPairs.get(key) ?? { pairId: r.labPair.id, invalid: new Set() };
      if (r.verdict === 'evidence-invalid') entry.invalid.add(r.labPair.role);
      else entry[r.labPair.role] = r;
      retryPairs.set(key, entry);
      continue;
    }
    if (r.labPair.role === 'term-default' || r.labPair.role === 'quit-stop-signal') {
      const key = `${runKeyOf(r)}\0${r.labPair.id}`;
      const entry = stopSignalPairs.get(key) ?? { pairId: r.labPair.id, invalid: new Set() };
      if (r.verdict === 'evidence-invalid') entry.invalid.add(r.labPair.role);
      else entry[r.labPair.role] = r;
      stopSignalPairs.set(key, entry);
      continue;
    }
    if (r.labPair.role === 'no-prestop' || r.labPair.role === 'sleep-outlasts-lag') {
      const key = `${runKeyOf(r)}\0${r.labPair.id}`;
      const entry = edgePairs.get(key) ?? { pairId: r.labPair.id, invalid: new Set() };
      if (r.verdict === 'evidence-invalid') entry.invalid.add(r.labPair.role);
      else entry[r.labPair.role] = r;
      edgePairs.set(key, entry);
      continue;
    }
    if (r.labPair.role === 'proxy-first' || r.labPair.role === 'app-first') {
      const key = `${runKeyOf(r)}\0${r.labPair.id}`;
      const entry = sidecarPairs.get(key) ?? { pairId: r.labPair.id, invalid: new Set() };
      if (r.verdict === 'evidence-invalid') entry.invalid.add(r.labPair.role);
      else entry[r.labPair.role] = r;
      sidecarPairs.set(key, entry);
      continue;
    }
    const key = `${runKeyOf(r)}\0${r.labPair.id}`;
    const entry = byPair.get(key) ?? { pairId: r.labPair.id, invalid: new Set() };
    if (r.verdict === 'evidence-invalid') entry.invalid.add(r.labPair.role);
    else entry[r.labPair.role] = r;
    byPair.set(key, entry);
  }
  return [
    ...[...byPair.values()].map(({ pairId, short, restored, invalid }) => {
      const id = `pair.${pairId}`;
      const invalidRoles = (['short', 'restored'] as const).filter(
        (role) => invalid.has(role) && !(role === 'short' ? short : restored),
      );
      if (invalidRoles.length) {
        return {
          pairId,
          invalidRoles,
          checks: [
            inconclusive(
              id,
              `the pair cannot be graded: the evidence of the ${invalidRoles.join('- and ')}-grace run is invalid`,
            ),
          ],
        };
      }
      if (!short || !restored) {
        return {
          pairId,
          checks: [inconclusive(id, `the pair needs both runs; missing the ${short ? 'restored' : 'short'}-grace one`)],
        };
      }
      // A half the harness could not grade (a lost path, an interrupted run) decides nothing: the pair waits for it.
      const open = [short, restored].filter((r) => r.verdict === 'inconclusive');
      if (open.length) {
        return {
          pairId,
          checks: [
            inconclusive(
              id,
              open
                .map(
                  (r) =>
                    `the ${r === short ? 'short' : 'restored'}-grace run (${r.graceSeconds}s) is inconclusive: ${r.explanation}`,
                )
                .join('; '),
            ),
          ],
        };
      }
      // A half that did what the model says for this run's own times, where the scenario as written says
      // otherwise, strayed from the design (a delete that reached the API seconds late, a late kubelet): the
      // lesson was not tested, which is no fault of the student's, nor a pass.
      const strayed = [short, restored].filter((r) => strayedFromDesign(r) !== null);
      if (strayed.length) {
        return {
          pairId,
          checks: [
            inconclusive(
              id,
              strayed
                .map(
                  (r) =>
                    `the ${r === short ? 'short' : 'restored'}-grace run (${r.graceSeconds}s) ${strayedFromDesign(r)}: this run did not test the grace; run it again`,
                )
                .join('; '),
            ),
          ],
        };
      }
      const problems: string[] = [];
      if (short.outcome !== 'cut')
        problems.push(`the short-grace run (${short.graceSeconds}s) was ${short.outcome}, not cut`);
      if (restored.outcome !== 'completed')
        problems.push(`the restored-grace run (${restored.graceSeconds}s) was ${restored.outcome}, not completed`);
      if (restored.graceSeconds <= short.graceSeconds)
        problems.push(
          `the restored grace (${restored.graceSeconds}s) is not longer than the short one (${short.graceSeconds}s)`,
        );
      return pairVerdict(
        pairId,
        [short, restored],
        problems,
        `the same ${short.workMs / 1000}s of work was cut with ${short.graceSeconds}s of grace and completed with ${restored.graceSeconds}s, on two pods`,
      );
    }),
    ...[...sidecarPairs.values()].map(gradeSidecarPair),
    ...[...retryPairs.values()].map(gradeRetryPair),
    ...[...stopSignalPairs.values()].map(gradeStopSignalPair),
    ...[...edgePairs.values()].map(gradeEdgePair),
  ];
}

interface RetryPair {
  pairId: string;
  'no-key'?: GradeResult;
  'with-key'?: GradeResult;
  invalid: Set<'no-key' | 'with-key'>;
}

/**
 * The retries pair (issue 27): the same work cut by SIGKILL after its effect and retried on another pod,
 * the effect doubled without an idempotency key and applied once with one.
 */
function gradeRetryPair(p: RetryPair): PairResult {
  const ready = readyPair(
    p.pairId,
    [
      { role: 'no-key', result: p['no-key'] },
      { role: 'with-key', result: p['with-key'] },
    ],
    p.invalid,
    { reportInvalidRoles: true },
  );
  if (!Array.isArray(ready)) return ready;
  const [bare, keyed] = ready;
  const problems: string[] = [];
  const summary = (r: GradeResult) => (r.kind === 'pod' ? r.retries : undefined);
  for (const [role, r] of [
    ['no-key', bare],
    ['with-key', keyed],
  ] as const) {
    const s = summary(r);
    if (!s) {
      problems.push(`the ${role} run has no retries`);
      continue;
    }
    const [first, second] = s.attempts;
    if (first?.outcome !== 'cut')
      problems.push(`the ${role} run's first attempt was ${first?.outcome ?? 'not sent'}, not cut`);
    if (second?.target !== 'standby' || second.podUid === null || second.podUid === first?.podUid)
      problems.push(`the ${role} run's retry did not land on another pod`);
  }
  const b = summary(bare),
    k = summary(keyed);
  if (b && b.effects !== 2) problems.push(`without a key the ledger shows ${b.effects} effect(s), not 2`);
  if (k && (k.effects !== 1 || k.alreadyApplied < 1))
    problems.push(
      `with a key the ledger shows ${k.effects} effect(s) and ${k.alreadyApplied} already-applied, not 1 and at least 1`,
    );
  if (b && k && b.effect !== k.effect) problems.push(`the effect point differs (${b.effect} vs ${k.effect})`);
  return pairVerdict(
    p.pairId,
    [bare, keyed],
    problems,
    `the same ${bare.workMs / 1000}s of work, cut after its effect and retried on another pod, did its effect twice without an idempotency key and once with one (the ledger answered the retry already-applied)`,
  );
}

interface SidecarPair {
  pairId: string;
  'proxy-first'?: GradeResult;
  'app-first'?: GradeResult;
  invalid: Set<'proxy-first' | 'app-first'>;
}

/**
 * The sidecar pair (issue 26): the same work through the same proxy, cut when the proxy is a regular
 * container stopped with the app, completed when it is a native sidecar stopped after it, on two pods.
 */
function gradeSidecarPair(p: SidecarPair): PairResult {
  const ready = readyPair(
    p.pairId,
    [
      { role: 'proxy-first', result: p['proxy-first'], missingName: 'proxy-first (regular container)' },
      { role: 'app-first', result: p['app-first'], missingName: 'app-first (native sidecar)' },
    ],
    p.invalid,
  );
  if (!Array.isArray(ready)) return ready;
  const [first, after] = ready;
  const native = (r: GradeResult) =>
    r.kind === 'pod' ? (r.prediction?.pod?.containers.find((c) => c.role === 'sidecar')?.native ?? null) : null;
  const problems: string[] = [];
  if (native(first) !== false) problems.push('the proxy-first run has no regular-container proxy');
  if (native(after) !== true) problems.push('the app-first run has no native sidecar proxy');
  if (first.outcome !== 'cut') problems.push(`the proxy-first run was ${first.outcome}, not cut`);
  if (after.outcome !== 'completed') problems.push(`the app-first run was ${after.outcome}, not completed`);
  return pairVerdict(
    p.pairId,
    [first, after],
    problems,
    `the same ${first.workMs / 1000}s of work through the same proxy was cut when the proxy was a regular container stopped with the app, and completed when it was a native sidecar stopped after it, on two pods`,
  );
}

/**
 * A pair half that did what the model says for its own times, where the scenario as written says otherwise
 * (its outcome is the pair's lesson): how it strayed, or null. The runner runs such a half again.
 */
export function strayedFromDesign(r: GradeResult): string | null {
  const role = r.labPair?.role;
  const wanted =
    role === 'short' || role === 'proxy-first' || role === 'term-default'
      ? 'cut'
      : role === 'restored' || role === 'app-first' || role === 'quit-stop-signal'
        ? 'completed'
        : null;
  if (
    !wanted ||
    r.kind !== 'pod' ||
    r.verdict !== 'matches-model' ||
    r.outcome === wanted ||
    r.asDesigned?.outcome !== wanted
  )
    return null;
  return `was ${r.outcome}, as the model predicts from that run's own times, but as written it is ${wanted}${strayedHow(r)}`;
}

/**
 * A pair half the grade could not decide because its work ended too close to the kill to call (on a
 * busy machine the delete or the kubelet lands a little late): how close, or null. Run again like a strayed one.
 */
export function tooCloseToDecide(r: GradeResult): string | null {
  if (!r.labPair || r.kind !== 'pod' || r.verdict !== 'inconclusive' || !r.prediction) return null;
  const p = r.prediction;
  // Either side within the resolution, or the other side within the node's jitter (outcome.ts tooCloseToDiffer).
  const otherSide =
    (r.outcome === 'cut' || r.outcome === 'completed') && (r.outcome !== p.outcome || r.exitCode !== p.exitCode);
  if (!tooCloseToCall(p) && !(otherSide && tooCloseToDiffer(p))) return null;
  return `could not be called: its work ended within ${r.prediction.marginSeconds.toFixed(3)}s of the kill`;
}

/**
 * The checks that leave a run open for its own times: a kubelet stalled before TERM or between Killing
 * and acting, a status written late, a hook that slept late, a delete the harness issued late or after
 * the pod had finished. Never the kubelet's or a controller's own cause, and never an incomplete run.
 */
const OWN_TIMES_CHECKS = new Set([
  'evidence.kubelet-times',
  'evidence.api-times',
  'evidence.live-lifecycle',
  'evidence.delete-delay',
  'evidence.delete-grace',
]);

/**
 * A whole pair half the grade left open because of its own times (above): those checks, or null. Such a
 * run cannot grade the pair and a fresh pod can: run again like a strayed one.
 */
export function leftOpen(r: GradeResult): string | null {
  if (!r.labPair || r.kind !== 'pod' || r.verdict !== 'inconclusive') return null;
  if (r.checks.some((c) => c.id === 'evidence.run-complete' && c.status !== 'pass')) return null;
  const open = r.checks.filter((c) => c.status === 'inconclusive' && OWN_TIMES_CHECKS.has(c.id));
  return open.length
    ? `was inconclusive (${open.map((c) => c.id).join(', ')}: ${open[0]!.reason.slice(0, 240)})`
    : null;
}

/** How a run's own times strayed from its scenario: where its TERM came against the model's for the design. */
function strayedHow(r: GradeResult): string {
  const designed = r.kind === 'pod' ? r.asDesigned : undefined;
  if (!designed || !r.prediction || r.prediction.basis !== 'observed') return '';
  return ` (TERM came ${r.prediction.termAt.toFixed(2)}s after the delete, where the design puts it at ${designed.termAt.toFixed(2)}s)`;
}
