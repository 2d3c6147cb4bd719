// Retry scenarios, graded (issue 27): the recorded runs of manifests/retries.yaml on the simulated cluster
// and on the real node match the retries model and pass the retries pair offline, the cause told with times; the model worked
// by hand; a hand-edited ledger count, a removed ledger line or a removed retry attempt is evidence invalid.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import { predictRetries } from '../../harness/grade/retry-theory.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import type { Attempt } from '../../harness/observation/retries.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { newRequestRecord } from '../../harness/run/request.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';
import { repoRoot } from '../support/processes.ts';

/** Recorded by `termlab run --sim --scenarios manifests/retries.yaml` (Kubernetes v1.37.2 simulated), each retry routed through the retry Service. */
const DIR = join(repoRoot, 'test/grade/fixtures/retries/sim');
/** The same lab recorded by the termlab before routes (schema version 6: every retry straight to the standby). */
const V6_DIR = join(repoRoot, 'test/grade/fixtures/retries/v6-sim');
/** Recorded on the project's real node, Kubernetes v1.37.2 (run-20261204-194458-e309, the lab image built from this tree by cluster:up), each retry through the retry Service. */
const NODE_DIR = join(repoRoot, 'test/grade/fixtures/retries/node');
const where = (dir: string) => (dir === NODE_DIR ? 'node' : dir === V6_DIR ? 'sim, version 6' : 'sim');
const recorded = [DIR, V6_DIR, NODE_DIR].flatMap((dir) =>
  readdirSync(dir).map((f) => [`${where(dir)}: ${f.replace('.observation.json', '')}`, join(dir, f)] as const),
);
const fixture = (name: string): Observation =>
  parseObservationFile(JSON.parse(readFileSync(join(DIR, `${name}.observation.json`), 'utf8')), name).observation;
const failed = (o: Observation) =>
  grade(o)
    .checks.filter((c) => c.status === 'fail')
    .map((c) => `${c.id}: ${c.reason}`);

describe('the recorded retry runs grade as the retries model says', () => {
  it.each(recorded)('%s matches the model', (_name, path) => {
    const parsed = parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path);
    const g = grade(parsed.observation, { fileVersion: parsed.fileVersion });
    expect(g.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(g.verdict).toBe('matches-model');
    expect(g.retries!.effects).toBe(g.retries!.predicted.effects);
  });

  it.each([
    ['sim', DIR],
    ['sim, version 6', V6_DIR],
    ['node', NODE_DIR],
  ])('%s: the retries pair passes offline, as it did in the run', async (_where, dir) => {
    const run = await gradePaths([dir]);
    expect(run.problems).toEqual([]);
    expect(run.pairs.map((p) => [p.pairId, p.checks.map((c) => c.status)])).toEqual([['retries', ['pass']]]);
  });

  it('names the cause with times: the effect on pod A, the SIGKILL, the retry on pod B doing it again', () => {
    expect(grade(fixture('retry-doubles-effect')).explanation).toMatch(
      /the effect ran at -?\d+\.\d\d s on pod A \(tl-retry-doubles-effect-\w+\), attempt 1 was cut at \d+\.\d\d s by SIGKILL, the retry \(through tl-retry-doubles-effect-\w+-svc: its only ready endpoint\) ran it again at \d+\.\d\d s on pod B \(tl-retry-doubles-effect-\w+-b\) and completed: 2 effect\(s\) for one request/,
    );
    // One sentence a reader can follow: the retry on pod B, not "which answered pod B (…)'s effect".
    expect(grade(fixture('retry-with-key')).explanation).toMatch(
      /attempt 1 was cut at \d+\.\d\d s by SIGKILL, the retry \(through tl-retry-with-key-\w+-svc: its only ready endpoint\) on pod B \(tl-retry-with-key-\w+-b\) reached the ledger at \d+\.\d\d s with the same idempotency key, was answered already-applied and completed: 1 effect\(s\) for one request, 1 answered already-applied/,
    );
    expect(grade(fixture('retry-with-key')).explanation).not.toMatch(/\)'s /);
    const atEnd = grade(fixture('retry-effect-at-end'));
    expect(atEnd.explanation).toMatch(
      /before its work's end, where the effect is, the retry \(through .*-svc: its only ready endpoint\) ran it at .* 1 effect\(s\) for one request; that is luck, not design: with the effect one line earlier .* 2 effects/,
    );
    expect(atEnd.retries!.counterfactual).not.toBeNull();
    expect(grade(fixture('retry-after-graceful')).explanation).toMatch(
      /attempt 1 completed at .* nothing to retry: 1 effect\(s\)/,
    );
  });

  it("draws one lane per attempt, with the ledger's effects marked in the lane of the attempt that made them", () => {
    const lanes = grade(fixture('retry-doubles-effect')).timeline.map((b) => [b.lane, b.kind, b.label]);
    expect(lanes).toEqual(
      expect.arrayContaining([
        ['attempt 1 to pod A', 'request', 'attempt 1 cut'],
        ['attempt 1 to pod A', 'effect', 'effect record 1'],
        ['attempt 2 to pod B', 'request', 'attempt 2 completed'],
        ['attempt 2 to pod B', 'effect', 'effect record 2'],
      ]),
    );
    expect(
      grade(fixture('retry-with-key')).timeline.find((b) => b.kind === 'effect' && b.lane === 'attempt 2 to pod B')
        ?.label,
    ).toBe('already applied (record 1)');
  });
});

describe('older files', () => {
  it('a version 5 file (no retries) is read and graded as version 7, with a note saying what it lacks', async () => {
    const run = await gradePaths([
      join(repoRoot, 'test/grade/fixtures/sidecar/sim/sidecar-native-proxy.observation.json'),
    ]);
    expect(run.problems).toEqual([]);
    expect(run.results[0]).toMatchObject({
      verdict: 'matches-model',
      notes: [expect.stringMatching(/^schema version 5: read and graded as version 7; it records no retries/)],
    });
  });

  it('a version 6 retry file is graded with a note that its retries went straight to the standby; a version 6 file of any other scenario with none', async () => {
    const run = await gradePaths([join(V6_DIR, 'retry-doubles-effect.observation.json')]);
    expect(run.problems).toEqual([]);
    expect(run.results[0]).toMatchObject({
      verdict: 'matches-model',
      notes: [
        expect.stringMatching(
          /^schema version 6: read and graded as version 7; its retries went straight to the standby pod/,
        ),
      ],
    });
    expect(run.results[0]!.explanation).not.toMatch(/through .*-svc/);
    const plain = JSON.parse(readFileSync(join(DIR, 'retry-doubles-effect.observation.json'), 'utf8'));
    const { retries: _gone, ...rest } = plain;
    const asV6 = parseObservationFile(
      {
        ...rest,
        schemaVersion: 6,
        scenario: { ...plain.scenario, retry: undefined, effect: undefined, labPair: undefined },
      },
      'v6-plain',
    );
    expect(grade(asV6.observation, { fileVersion: 6 }).notes.filter((n) => n.startsWith('schema version'))).toEqual([]);
  });

  it('a version 6 file carrying a route or a retry Service is refused, naming the field', () => {
    const v6 = JSON.parse(readFileSync(join(V6_DIR, 'retry-doubles-effect.observation.json'), 'utf8'));
    const routed = JSON.parse(readFileSync(join(DIR, 'retry-doubles-effect.observation.json'), 'utf8'));
    v6.retries.attempts[1].route = routed.retries.attempts[1].route;
    expect(() => parseObservationFile(v6, 'v6.json')).toThrow(
      /v6\.json: retries\.attempts\.1\.route: a file of version 6 has no route/,
    );
    delete v6.retries.attempts[1].route;
    v6.retries.service = routed.retries.service;
    expect(() => parseObservationFile(v6, 'v6.json')).toThrow(
      /retries\.service: a file of version 6 has no retry Service/,
    );
  });
});

describe('the retries model, by hand', () => {
  const base = {
    terminationGracePeriodSeconds: 2,
    workMs: 8000,
    deleteDelayMs: 1000,
    mode: 'graceful',
    preStop: { kind: 'none' },
    name: 'x',
  } as const;
  const scenario = (
    effect: Scenario['effect'],
    key: boolean,
    on: ('cut' | 'rejected' | '5xx')[] = ['cut'],
    attempts = 2,
  ): Scenario => ({ ...base, effect, retry: { attempts, backoffMs: 500, on, idempotencyKey: key } });
  const brief = (p: ReturnType<typeof predictRetries>) => [
    p.attempts.map((a) => `${a.target}:${a.outcome}:${a.effect}`).join(' '),
    p.effects,
    p.alreadyApplied,
  ];

  it.each([
    ['start, no key, cut', scenario('start', false), 'cut', ['deleted:cut:applied standby:completed:applied', 2, 0]],
    [
      'start, key, cut',
      scenario('start', true),
      'cut',
      ['deleted:cut:applied standby:completed:already-applied', 1, 1],
    ],
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
    expect(failed(o)).toEqual([
      expect.stringMatching(
        /^evidence\.ledger: the file's ledger count \(applied 1, already-applied 0\) is not the ledger's own lines' \(applied 2, already-applied 0\)/,
      ),
    ]);
  });

  it("the ledger's second record removed (and the count with it): the standby's effect line still names it", () => {
    const o = fixture('retry-doubles-effect');
    const lines = o.retries!.ledger!.logLines;
    o.retries!.ledger!.logLines = lines.filter(
      (l) => !(l.text.includes('"event":"applied"') && l.text.includes('"seq":2')),
    );
    o.retries!.ledgerCount.applied = 1;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^evidence\.ledger: the standby pod logged its effect for .*-a2 applied as record 2 \(line \d+\); the ledger's log has no such line/,
        ),
      ]),
    );
  });

  it("the retry attempt removed: the policy retries the cut, and the standby's log accepted it", () => {
    const o = fixture('retry-doubles-effect');
    o.retries!.attempts = o.retries!.attempts.slice(0, 1);
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toContain(
      'evidence.retry-attempts: attempt 1 ended cut, which the policy retries, and 2 attempts are allowed, yet no attempt 2 is recorded',
    );
  });

  it("the retry attempt and the attempt limit both edited: the standby's log and the ledger still show it", () => {
    const o = fixture('retry-doubles-effect');
    o.retries!.attempts = o.retries!.attempts.slice(0, 1);
    o.scenario.retry!.attempts = 1;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(
      /evidence\.retry-attempts: the standby pod's log accepted request .*-a2 \(line \d+\), which no recorded attempt sent/,
    );
  });

  it('an attempt said to land on the deleted pod, or a key the first attempt did not carry', () => {
    const landed = fixture('retry-doubles-effect');
    landed.retries!.attempts[1]!.podUid = landed.pod!.uid;
    expect(failed(landed)).toContain(
      `evidence.retry-attempts: attempt 2 was answered by pod ${landed.pod!.uid}, not the standby pod ${landed.retries!.standby!.uid}`,
    );
    const keyed = fixture('retry-with-key');
    keyed.retries!.attempts[1]!.key = 'another-key';
    expect(grade(keyed).verdict).toBe('evidence-invalid');
  });

  it("a doubled effect claimed as one: the ledger's record turned already-applied without a key", () => {
    const o = fixture('retry-doubles-effect');
    const r = o.retries!;
    r.ledger!.logLines = r.ledger!.logLines.map((l) =>
      l.text.includes('"seq":2')
        ? { ...l, text: l.text.replace('"event":"applied"', '"event":"already-applied"').replace('"seq":2', '"seq":1') }
        : l,
    );
    r.ledgerCount = { applied: 1, alreadyApplied: 1 };
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(
      /evidence\.ledger: ledger line \d+ answers already-applied with record 1, which did not apply key null/,
    );
  });

  it("a retry's route edited: removed, its pick changed, its endpoint made not ready, a stranger listed, read inside the backoff, or the Service dropped", () => {
    const edited = (edit: (o: Observation, route: NonNullable<Attempt['route']>) => void) => {
      const o = fixture('retry-doubles-effect');
      edit(o, o.retries!.attempts[1]!.route!);
      expect(grade(o).verdict).toBe('evidence-invalid');
      return failed(o).join('\n');
    };
    expect(
      edited((o) => {
        delete o.retries!.attempts[1]!.route;
      }),
    ).toMatch(/attempt 2 records no route: this file's version routes each retry through the retry Service/);
    expect(
      edited((o, r) => {
        r.chosen = o.pod!.uid;
      }),
    ).toMatch(/attempt 2 was routed to pod .*, which its route lists as no endpoint at all/);
    expect(
      edited((_o, r) => {
        r.endpoints[0]!.ready = false;
      }),
    ).toMatch(/attempt 2 records no pick, though its route lists|neither ready nor serving-terminating/);
    expect(
      edited((_o, r) => {
        r.endpoints.push({ pod: 'someone-else', uid: 'uid-stranger', ready: true, serving: true, terminating: false });
      }),
    ).toMatch(/lists endpoint someone-else \(uid uid-stranger\) in its route, which is neither lab pod/);
    expect(
      edited((o, r) => {
        r.read = { ...r.read, mono: o.retries!.attempts[0]!.ended!.mono + 1 };
      }),
    ).toMatch(/read its route 1 ms after attempt 1 ended, inside the 500 ms backoff/);
    expect(
      edited((o) => {
        o.retries!.service = null;
      }),
    ).toMatch(/attempt 2 was sent through a Service the file does not record/);
    // Attempt 1 goes to the deleted pod itself: a route on it is not what ran.
    expect(
      edited((o) => {
        o.retries!.attempts[0]!.route = o.retries!.attempts[1]!.route;
      }),
    ).toMatch(/attempt 1 records a route through the retry Service/);
  });

  it("a retry whose route found no endpoint is recorded unsent, ends the retries and is inconclusive (the lab's precondition failed); one claimed sent is evidence invalid", () => {
    const o = fixture('retry-doubles-effect');
    const standby = o.retries!.standby!;
    // As a run would record it had the standby never become ready: no endpoint to take the retry.
    const a2 = o.retries!.attempts[1]!;
    Object.assign(a2, { ...newRequestRecord(a2.id), errorCode: 'NO_ENDPOINTS' });
    a2.route = {
      ...a2.route!,
      endpoints: a2.route!.endpoints.map((e) => ({ ...e, ready: false, serving: false })),
      chosen: null,
    };
    standby.logLines = [];
    standby.logEndedEarly = true;
    o.retries!.ledger!.logLines = o.retries!.ledger!.logLines.filter((l) => !l.text.includes('"seq":2'));
    o.retries!.ledgerCount.applied = 1;
    const g = grade(o);
    expect(g.checks.filter((c) => c.id.startsWith('evidence.retry')).map((c) => c.status)).toEqual(['pass']);
    expect(g.checks.find((c) => c.id === 'outcome.retries')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(/found no endpoint of the retry Service/),
    });
    expect(g.verdict).not.toBe('differs-from-model');
    expect(g.explanation).not.toMatch(/evidence/);
    a2.outcome = 'completed';
    expect(failed(o).join('\n')).toMatch(/attempt 2 had no endpoint to take it, yet is recorded as sent/);
  });

  it('a retry whose route the harness could not read (it lost the API) is inconclusive, never a verdict on the app', () => {
    const o = fixture('retry-doubles-effect');
    const a2 = o.retries!.attempts[1]!;
    Object.assign(a2, {
      sent: null,
      accepted: null,
      ended: null,
      status: null,
      bytes: 0,
      sha256: null,
      done: null,
      doneSeen: false,
      podUid: null,
      errorCode: 'ROUTE_UNREAD',
      outcome: 'not-sent',
      route: null,
    });
    o.retries!.standby!.logLines = [];
    o.retries!.standby!.logEndedEarly = true;
    o.retries!.ledger!.logLines = o
      .retries!.ledger!.logLines.filter((l) => !l.text.includes('"seq":2'))
      .map((l) => ({ ...l, text: l.text.replace('"records":2', '"records":1') }));
    o.retries!.ledgerCount.applied = 1;
    const g = grade(o);
    expect(failed(o)).toEqual([]);
    expect(g.verdict).toBe('inconclusive');
    expect(g.checks.find((c) => c.id === 'evidence.retry-attempts')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(/could not read the retry Service's endpoints/),
    });
    expect(g.checks.find((c) => c.id === 'outcome.retries')).toMatchObject({ status: 'inconclusive' });
  });

  it("the retries record dropped from a retry scenario's file", () => {
    const o = fixture('retry-with-key');
    delete o.retries;
    expect(failed(o)).toEqual([
      'evidence.retry-attempts: the scenario retries, but the file has no retries record (attempts, standby, ledger)',
    ]);
  });
});
