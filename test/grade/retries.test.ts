// Retry scenarios, graded (issue 27): the recorded runs of manifests/retries.yaml on the simulated cluster
// and on the real node match the retries model and pass the retries pair offline, the cause told with times; the model worked
// by hand; a hand-edited ledger count, a removed ledger line or a removed retry attempt is evidence invalid.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import { predictRetries } from '../../harness/grade/retry-theory.ts';
import type { Observation } from '../../harness/observation.ts';
import { parseObservationFile } from '../../harness/observation-read.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { repoRoot } from '../support/processes.ts';

/** Recorded by `termlab run --sim --scenarios manifests/retries.yaml` (Kubernetes v1.37.2 simulated). */
const DIR = join(repoRoot, 'test/grade/fixtures/retries/sim');
/** Recorded on the project's real node, Kubernetes v1.37.2 (run-20261202-051109-ea57, the lab image built from this tree). */
const NODE_DIR = join(repoRoot, 'test/grade/fixtures/retries/node');
const recorded = [DIR, NODE_DIR].flatMap((dir) => readdirSync(dir).map((f) => [`${dir === NODE_DIR ? 'node' : 'sim'}: ${f.replace('.observation.json', '')}`, join(dir, f)] as const));
const fixture = (name: string): Observation => parseObservationFile(JSON.parse(readFileSync(join(DIR, `${name}.observation.json`), 'utf8')), name).observation;
const failed = (o: Observation) => grade(o).checks.filter((c) => c.status === 'fail').map((c) => `${c.id}: ${c.reason}`);

describe('the recorded retry runs grade as the retries model says', () => {
  it.each(recorded)('%s matches the model', (_name, path) => {
    const g = grade(parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path).observation);
    expect(g.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(g.verdict).toBe('matches-model');
    expect(g.retries!.effects).toBe(g.retries!.predicted.effects);
  });

  it.each([['sim', DIR], ['node', NODE_DIR]])('%s: the retries pair passes offline, as it did in the run', async (_where, dir) => {
    const run = await gradePaths([dir]);
    expect(run.problems).toEqual([]);
    expect(run.pairs.map((p) => [p.pairId, p.checks.map((c) => c.status)])).toEqual([['retries', ['pass']]]);
  });

  it('names the cause with times: the effect on pod A, the SIGKILL, the retry on pod B doing it again', () => {
    expect(grade(fixture('retry-doubles-effect')).explanation).toMatch(/the effect ran at \d+\.\d\d s on pod A \(tl-retry-doubles-effect-\w+\), attempt 1 was cut at \d+\.\d\d s by SIGKILL, the retry ran it again at \d+\.\d\d s on pod B \(tl-retry-doubles-effect-\w+-b\) and completed: 2 effect\(s\) for one request/);
    // One sentence a reader can follow: the retry on pod B, not "which answered pod B (…)'s effect".
    expect(grade(fixture('retry-with-key')).explanation).toMatch(/attempt 1 was cut at \d+\.\d\d s by SIGKILL, the retry on pod B \(tl-retry-with-key-\w+-b\) reached the ledger at \d+\.\d\d s with the same idempotency key, was answered already-applied and completed: 1 effect\(s\) for one request, 1 answered already-applied/);
    expect(grade(fixture('retry-with-key')).explanation).not.toMatch(/\)'s /);
    const atEnd = grade(fixture('retry-effect-at-end'));
    expect(atEnd.explanation).toMatch(/before its work's end, where the effect is, the retry ran it at .* 1 effect\(s\) for one request; that is luck, not design: with the effect one line earlier .* 2 effects/);
    expect(atEnd.retries!.counterfactual).not.toBeNull();
    expect(grade(fixture('retry-after-graceful')).explanation).toMatch(/attempt 1 completed at .* nothing to retry: 1 effect\(s\)/);
  });

  it('draws one lane per attempt, with the ledger\'s effects marked in the lane of the attempt that made them', () => {
    const lanes = grade(fixture('retry-doubles-effect')).timeline.map((b) => [b.lane, b.kind, b.label]);
    expect(lanes).toEqual(expect.arrayContaining([
      ['attempt 1 to pod A', 'request', 'attempt 1 cut'], ['attempt 1 to pod A', 'effect', 'effect record 1'],
      ['attempt 2 to pod B', 'request', 'attempt 2 completed'], ['attempt 2 to pod B', 'effect', 'effect record 2'],
    ]));
    expect(grade(fixture('retry-with-key')).timeline.find((b) => b.kind === 'effect' && b.lane === 'attempt 2 to pod B')?.label).toBe('already applied (record 1)');
  });
});

describe('older files', () => {
  it('a version 5 file (no retries) is read and graded as version 6, with a note saying what it lacks', async () => {
    const run = await gradePaths([join(repoRoot, 'test/grade/fixtures/sidecar/sim/sidecar-native-proxy.observation.json')]);
    expect(run.problems).toEqual([]);
    expect(run.results[0]).toMatchObject({ verdict: 'matches-model', notes: [expect.stringMatching(/^schema version 5: read and graded as version 6; it records no retries/)] });
  });
});

describe('the retries model, by hand', () => {
  const base = { terminationGracePeriodSeconds: 2, workMs: 8000, deleteDelayMs: 1000, mode: 'graceful', preStop: { kind: 'none' }, name: 'x' } as const;
  const scenario = (effect: Scenario['effect'], key: boolean, on: ('cut' | 'rejected' | '5xx')[] = ['cut'], attempts = 2): Scenario => ({ ...base, effect, retry: { attempts, backoffMs: 500, on, idempotencyKey: key } });
  const brief = (p: ReturnType<typeof predictRetries>) => [p.attempts.map((a) => `${a.target}:${a.outcome}:${a.effect}`).join(' '), p.effects, p.alreadyApplied];

  it.each([
    ['start, no key, cut', scenario('start', false), 'cut', ['deleted:cut:applied standby:completed:applied', 2, 0]],
    ['start, key, cut', scenario('start', true), 'cut', ['deleted:cut:applied standby:completed:already-applied', 1, 1]],
    ['end, no key, cut', scenario('end', false), 'cut', ['deleted:cut:none standby:completed:applied', 1, 0]],
    ['start, completed', scenario('start', false), 'completed', ['deleted:completed:applied', 1, 0]],
    ['no effect', scenario('none', false), 'cut', ['deleted:cut:none standby:completed:none', 0, 0]],
    ['a policy that does not retry a cut', scenario('start', false, ['5xx']), 'cut', ['deleted:cut:applied', 1, 0]],
    ['one attempt only', scenario('start', false, ['cut'], 1), 'cut', ['deleted:cut:applied', 1, 0]],
  ] as const)('%s', (_name, s, first, want) => {
    expect(brief(predictRetries(s, first))).toEqual(want);
  });
});

describe('a retry run edited by hand is evidence invalid', () => {
  it('a hand-edited ledger count', () => {
    const o = fixture('retry-doubles-effect');
    o.retries!.ledgerCount.applied = 1;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toEqual([expect.stringMatching(/^evidence\.ledger: the file's ledger count \(applied 1, already-applied 0\) is not the ledger's own lines' \(applied 2, already-applied 0\)/)]);
  });

  it('the ledger\'s second record removed (and the count with it): the standby\'s effect line still names it', () => {
    const o = fixture('retry-doubles-effect');
    const lines = o.retries!.ledger!.logLines;
    o.retries!.ledger!.logLines = lines.filter((l) => !(l.text.includes('"event":"applied"') && l.text.includes('"seq":2')));
    o.retries!.ledgerCount.applied = 1;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toEqual(expect.arrayContaining([expect.stringMatching(/^evidence\.ledger: the standby pod logged its effect for .*-a2 applied as record 2 \(line \d+\); the ledger's log has no such line/)]));
  });

  it('the retry attempt removed: the policy retries the cut, and the standby\'s log accepted it', () => {
    const o = fixture('retry-doubles-effect');
    o.retries!.attempts = o.retries!.attempts.slice(0, 1);
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toContain('evidence.retry-attempts: attempt 1 ended cut, which the policy retries, and 2 attempts are allowed, yet no attempt 2 is recorded');
  });

  it('the retry attempt and the attempt limit both edited: the standby\'s log and the ledger still show it', () => {
    const o = fixture('retry-doubles-effect');
    o.retries!.attempts = o.retries!.attempts.slice(0, 1);
    o.scenario.retry!.attempts = 1;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(/evidence\.retry-attempts: the standby pod's log accepted request .*-a2 \(line \d+\), which no recorded attempt sent/);
  });

  it('an attempt said to land on the deleted pod, or a key the first attempt did not carry', () => {
    const landed = fixture('retry-doubles-effect');
    landed.retries!.attempts[1]!.podUid = landed.pod!.uid;
    expect(failed(landed)).toContain(`evidence.retry-attempts: attempt 2 was answered by pod ${landed.pod!.uid}, not the standby pod ${landed.retries!.standby!.uid}`);
    const keyed = fixture('retry-with-key');
    keyed.retries!.attempts[1]!.key = 'another-key';
    expect(grade(keyed).verdict).toBe('evidence-invalid');
  });

  it('a doubled effect claimed as one: the ledger\'s record turned already-applied without a key', () => {
    const o = fixture('retry-doubles-effect');
    const r = o.retries!;
    r.ledger!.logLines = r.ledger!.logLines.map((l) => (l.text.includes('"seq":2') ? { ...l, text: l.text.replace('"event":"applied"', '"event":"already-applied"').replace('"seq":2', '"seq":1') } : l));
    r.ledgerCount = { applied: 1, alreadyApplied: 1 };
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(/evidence\.ledger: ledger line \d+ answers already-applied with record 1, which did not apply key null/);
  });

  it('the retries record dropped from a retry scenario\'s file', () => {
    const o = fixture('retry-with-key');
    delete o.retries;
    expect(failed(o)).toEqual(['evidence.retry-attempts: the scenario retries, but the file has no retries record (attempts, standby, ledger)']);
  });
});
