// A class held against its witness (issue 41), offline from an export: each hand-in's pods must be in the
// witness's records, be its student's, and have ended as the files say. A consistent forgery (a UID the
// cluster never had, a finishedAt moved with every dependent claim) or a copy of another's run needs the
// instructor (exit 4); a run on the simulated cluster is `not vouchable`, and nothing else changes.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { type WitnessExport, type WitnessRecord, witnessJsonSchema } from '../../harness/observation/witness.ts';
import { EXIT } from '../../lib/errors.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';
import { writeRunDir } from './fixtures.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig' };
let root: string;

const observationsIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.observation.json'))
    .map((f) => join(dir, f));
const readObs = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Observation;
const writeObs = (file: string, o: Observation) => writeFileSync(file, JSON.stringify(o, null, 2));

/** A student's run directory, as run on a real cluster (the sim's fixtures, marked not simulated). */
function handIn(student: string, tag: string, simulated = false): string {
  const dir = writeRunDir(join(root, 'work'), { student, tag });
  for (const file of observationsIn(dir)) {
    const o = readObs(file);
    o.run.cluster.simulated = simulated;
    writeObs(file, o);
  }
  return dir;
}

/** What the witness would have kept of an observation's pod, in student's namespace. */
function recordOf(o: Observation, student: string): WitnessRecord {
  const end = o.finalState!;
  const ack = o.timeline.deleteAcknowledged!;
  return {
    version: 1,
    uid: o.pod!.uid,
    namespace: `termlab-${student}`,
    name: o.pod!.name,
    student,
    ownerLabel: o.run.ownerId,
    scenario: o.scenario.name,
    runId: o.run.runId,
    created: end.startedAt,
    deletionTimestamp: ack.deletionTimestamp,
    grace: ack.deletionGracePeriodSeconds,
    terminationGracePeriodSeconds: o.pod!.terminationGracePeriodSeconds,
    lateDeletion: false,
    containers: [
      {
        name: end.container,
        init: false,
        exitCode: end.exitCode,
        reason: end.reason,
        startedAt: end.startedAt,
        finishedAt: end.finishedAt,
      },
    ],
    events: [
      {
        reason: 'Killing',
        type: 'Normal',
        message: 'Stopping container lab',
        count: 1,
        firstTimestamp: null,
        lastTimestamp: null,
      },
    ],
    goneAt: end.finishedAt,
    goneSeenBy: 'watch',
    podResourceVersion: '42',
    firstSeenAt: end.startedAt!,
    recordVersion: '43',
  };
}

const exportOf = (records: WitnessRecord[]): WitnessExport => ({
  kind: 'termlab.witness',
  version: 1,
  cluster: { context: 'termlab-node', server: 'https://127.0.0.1:6443' },
  namespace: 'termlab-witness',
  exportedAt: '2026-12-06T22:00:00Z',
  records,
});

const shift = (time: string, seconds: number) =>
  new Date(Date.parse(time) + seconds * 1000).toISOString().replace('.000Z', 'Z');

let klass: string;
let witnessFile: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'termlab-witness-grade-'));
  klass = join(root, 'class');
  mkdirSync(klass);
  const records: WitnessRecord[] = [];
  // alice and bob, each their own run, each recorded by the witness in their own namespace.
  for (const student of ['alice', 'bob']) {
    const dir = handIn(student, student);
    for (const file of observationsIn(dir)) records.push(recordOf(readObs(file), student));
    copyDir(dir, join(klass, student));
  }
  // carol hands in a copy of alice's observations under her own name (a run without sealed predictions).
  const carol = join(klass, 'carol');
  mkdirSync(carol);
  for (const file of observationsIn(join(klass, 'alice'))) {
    const o = readObs(file);
    delete o.run.predictions;
    writeObs(join(carol, file.split('/').pop()!), o);
  }
  // dave forged a consistent pair: pods the cluster never had.
  copyDir(handIn('dave', 'dave'), join(klass, 'dave'));
  // erin's real run, with finishedAt moved by 3 s and every claim that follows from it moved too.
  const erin = handIn('erin', 'erin');
  for (const file of observationsIn(erin)) {
    const o = readObs(file);
    records.push(recordOf(o, 'erin'));
    if (o.scenario.name === 'short-grace') o.finalState!.finishedAt = shift(o.finalState!.finishedAt!, 3);
    writeObs(file, o);
  }
  copyDir(erin, join(klass, 'erin'));
  // frank ran on the simulated cluster: no witness saw it.
  copyDir(handIn('frank', 'frank', true), join(klass, 'frank'));
  witnessFile = join(root, 'witness.json');
  writeFileSync(witnessFile, JSON.stringify(exportOf(records), null, 1));
});

function copyDir(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) copyFileSync(join(from, f), join(to, f));
}

const rowsOf = (csv: string) => {
  const [head, ...lines] = csv.trim().split('\r\n');
  const cols = head!.split(',');
  return { cols, lines };
};

describe('grading against the witness', () => {
  it('vouches for honest runs and flags a copy, a forged UID and a moved finishedAt (exit 4)', async () => {
    const book = join(root, 'book.json');
    const csv = join(root, 'book.csv');
    const r = await runCli(
      [
        'grade',
        klass,
        '--gradebook',
        csv,
        '--gradebook-json',
        book,
        '--md',
        join(root, 'class.md'),
        '--witness-file',
        witnessFile,
      ],
      offline,
    );
    expect(r.code, r.stderr).toBe(EXIT.needsReview);
    const parsed = GradebookSchema.parse(JSON.parse(readFileSync(book, 'utf8')));
    const vouched = Object.fromEntries(parsed.rows.map((row) => [row.student, row.vouched]));
    const alice = readObs(observationsIn(join(klass, 'alice')).find((f) => f.includes('short-grace'))!);
    const erin = readObs(observationsIn(join(klass, 'erin')).find((f) => f.includes('short-grace'))!);
    expect(vouched).toEqual({
      alice: 'yes',
      bob: 'yes',
      carol: expect.stringMatching(/^mismatch: owner \(witness alice, hand-in carol\)$/),
      dave: 'no record',
      erin: `mismatch: finishedAt (witness ${shift(erin.finalState!.finishedAt!, -3)}, hand-in ${erin.finalState!.finishedAt})`,
      frank: 'not vouchable',
    });
    const review = Object.fromEntries(parsed.rows.map((row) => [row.student, row.review]));
    expect(review.alice).toEqual([expect.stringContaining('shares pod UIDs')]);
    expect(review.bob).toEqual([]);
    expect(review.frank).toEqual([]);
    expect(review.dave!.join('\n')).toMatch(/witness: .*pod uid-dave-short \(short-grace\): the witness has no record/);
    expect(alice.pod!.uid).toBe('uid-alice-short');
    const { cols, lines } = rowsOf(readFileSync(csv, 'utf8'));
    expect(cols).toContain('vouched');
    expect(lines.find((l) => l.startsWith('frank'))).toContain(',not vouchable,');
    expect(r.stdout).toMatch(/^witness: 6 pod record\(s\) from .*witness\.json \(exported from termlab-node/m);
    expect(r.stdout).toMatch(/^bob .*; vouched yes$/m);
    // The class report has the column, per student.
    const md = readFileSync(join(root, 'class.md'), 'utf8');
    expect(md).toMatch(/\| vouched \|/);
    expect(md).toMatch(/^\| carol \|.*\| mismatch: owner \(witness alice, hand-in carol\) \|/m);
  });

  it('regrades a sim-only class from an export with no records: only the vouched column is added', async () => {
    const sim = join(root, 'sim-class');
    copyDir(join(klass, 'frank'), join(sim, 'frank'));
    const empty = join(root, 'empty-witness.json');
    writeFileSync(empty, JSON.stringify(exportOf([])));
    const plain = await runCli(['grade', sim, '--gradebook', join(root, 'plain.csv')], offline);
    const held = await runCli(['grade', sim, '--gradebook', join(root, 'held.csv'), '--witness-file', empty], offline);
    expect(held.code).toBe(plain.code);
    const before = rowsOf(readFileSync(join(root, 'plain.csv'), 'utf8'));
    const after = rowsOf(readFileSync(join(root, 'held.csv'), 'utf8'));
    const at = after.cols.indexOf('vouched');
    expect(after.cols.filter((_, i) => i !== at)).toEqual(before.cols);
    expect(after.lines[0]!.split(',')[at]).toBe('not vouchable');
  });

  it('refuses a malformed export with exit 2, naming the file and the field', async () => {
    const bad = exportOf([]);
    (bad as { records: unknown[] }).records = [
      { ...JSON.parse(readFileSync(witnessFile, 'utf8')).records[0], grace: 'five' },
    ];
    const file = join(root, 'bad-witness.json');
    writeFileSync(file, JSON.stringify(bad));
    const r = await runCli(['grade', klass, '--gradebook', join(root, 'x.csv'), '--witness-file', file], offline);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toMatch(/bad-witness\.json: records\.0\.grace/);
    writeFileSync(file, JSON.stringify({ kind: 'termlab.gradebook' }));
    const wrongKind = await runCli(
      ['grade', klass, '--gradebook', join(root, 'x.csv'), '--witness-file', file],
      offline,
    );
    expect(wrongKind.code).toBe(EXIT.badInput);
    expect(wrongKind.stderr).toMatch(/kind: expected "termlab\.witness"/);
  });

  it('says what is wrong with the witness flags (exit 2), and that no cluster answers --witness (exit 3)', async () => {
    const book = join(root, 'flags.csv');
    const cases: [string[], number, RegExp][] = [
      [['--witness', '--witness-file', witnessFile], EXIT.badInput, /give one of them/],
      [
        ['--witness-file', witnessFile, '--context', 'x'],
        EXIT.badInput,
        /--context names where the witness is: it goes with --witness/,
      ],
      [['--witness', '--kubeconfig', '/nonexistent/kubeconfig'], EXIT.clusterUnreachable, /nonexistent\/kubeconfig/],
    ];
    for (const [flags, code, says] of cases) {
      const r = await runCli(['grade', klass, '--gradebook', book, ...flags], offline);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(says);
    }
    const alone = await runCli(['grade', klass, '--witness-file', witnessFile], offline);
    expect(alone.code).toBe(EXIT.badInput);
    expect(alone.stderr).toMatch(/name the gradebook with --gradebook/);
    const sub = await runCli(['class', 'witness', 'import', '-o', join(root, 'w.json')], offline);
    expect(sub.code).toBe(EXIT.badInput);
    expect(sub.stderr).toMatch(/the one there is, is export/);
  });

  it('keeps docs/witness.schema.json the zod schema of the export', () => {
    expect(witnessJsonSchema()).toBe(readFileSync(join(repoRoot, 'docs', 'witness.schema.json'), 'utf8'));
  });
});
