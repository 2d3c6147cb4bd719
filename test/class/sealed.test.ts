// Predictions sealed by the run: recorded before the first pod, packed from the run, and a file
// written afterwards (or swapped in) never graded as if made before.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import { EXIT } from '../../lib/errors.ts';
import { predictionsSha256 } from '../../harness/grade/predictions.ts';
import { ObservationSchema } from '../../harness/observation/schema.ts';
import { runCli } from '../support/cli.ts';
import { writeRunDir } from './fixtures.ts';

const root = mkdtempSync(join(tmpdir(), 'termlab-sealed-'));
const env = { TERMLAB_STATE_DIR: join(root, 'state'), KUBECONFIG: '/nonexistent/kubeconfig' };
const scenarios = join(root, 'scenarios.yaml');
const predictions = join(root, 'predictions.yaml');
const PREDICTED = 'student: Ada Lovelace\npredictions:\n  quick: { outcome: completed, exitCode: 0 }\n';
let sealedRun: string;
let sealedStdout: string;

beforeAll(async () => {
  writeFileSync(
    scenarios,
    'scenarios:\n  - { name: quick, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 5, workMs: 800, deleteDelayMs: 200 }\n',
  );
  writeFileSync(predictions, PREDICTED);
  sealedRun = join(root, 'sealed-run');
  const r = await runCli(
    ['run', '--sim', '--scenarios', scenarios, '--predictions', predictions, '--output-dir', sealedRun],
    env,
  );
  expect(r.code, r.stderr).toBe(0);
  sealedStdout = r.stdout;
}, 120_000);

describe('sealed predictions', () => {
  it('records the predictions, content and sha256, in the run record and the observation before the first pod', () => {
    const hash = predictionsSha256(PREDICTED);
    expect(sealedStdout).toContain(
      `predictions sealed: ${predictions} (sha256 ${hash.slice(0, 12)}…) for Ada Lovelace`,
    );
    const o = ObservationSchema.parse(JSON.parse(readFileSync(join(sealedRun, 'quick.observation.json'), 'utf8')));
    expect(o.run.predictions).toMatchObject({ sha256: hash, content: PREDICTED });
    // Sealed before the watch that precedes the pod's creation.
    expect(Date.parse(o.run.predictions!.sealedAt)).toBeLessThanOrEqual(
      Date.parse(o.timeline.watchEstablished!.at.wall),
    );
    const record = JSON.parse(readFileSync(join(env.TERMLAB_STATE_DIR, 'runs', `${o.run.runId}.json`), 'utf8'));
    expect(record.predictions).toMatchObject({ sha256: hash });
    expect(readFileSync(join(sealedRun, 'predictions.yaml'), 'utf8')).toBe(PREDICTED);
  });

  it('packs the sealed predictions, and refuses a file written after the run, naming both hashes', async () => {
    const later = join(root, 'later.yaml');
    writeFileSync(later, PREDICTED.replace('completed, exitCode: 0', 'cut, exitCode: 137'));
    const refused = await runCli(
      ['pack', sealedRun, '--output-file', join(root, 'refused.tar.gz'), '--predictions', later],
      env,
    );
    expect(refused.code).toBe(EXIT.badInput);
    expect(refused.stderr).toContain(
      `--predictions ${later} (sha256 ${predictionsSha256(readFileSync(later, 'utf8'))}) is not the predictions file run`,
    );
    expect(refused.stderr).toContain(`sealed before its first pod (sha256 ${predictionsSha256(PREDICTED)})`);
    // Editing the run folder's copy changes nothing: the pack takes the predictions from the observations.
    writeFileSync(join(sealedRun, 'predictions.yaml'), readFileSync(later));
    const archive = join(root, 'ada.tar.gz');
    const packed = await runCli(['pack', sealedRun, '--output-file', archive], env);
    expect(packed).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('with the predictions the run sealed before its first pod'),
    });
    const graded = await runCli(['grade', archive, '--gradebook-json', join(root, 'ada.json')], env);
    expect(graded.code, graded.stdout + graded.stderr).toBe(EXIT.ok);
    const [row] = GradebookSchema.parse(JSON.parse(readFileSync(join(root, 'ada.json'), 'utf8'))).rows;
    expect(row).toMatchObject({
      student: 'Ada Lovelace',
      identity: 'predictions',
      predictionsRight: 1,
      predictionsTotal: 1,
      review: [],
    });
  });

  it('flags for review a run made without --predictions, its file handed in beside it', async () => {
    const dir = writeRunDir(join(root, 'work'), { student: 'Bob Byte', tag: 'bob', sealed: false });
    const archive = join(root, 'bob.tar.gz');
    const packed = await runCli(['pack', dir, '--output-file', archive], env);
    expect(packed.code).toBe(EXIT.ok);
    expect(packed.stderr).toContain('the run was started without --predictions');
    const r = await runCli(['grade', archive, '--gradebook-json', join(root, 'bob.json')], env);
    expect(r.code).toBe(EXIT.needsReview);
    const [row] = GradebookSchema.parse(JSON.parse(readFileSync(join(root, 'bob.json'), 'utf8'))).rows;
    // Not the predictions' name: an unsealed file does not say who ran the lab.
    expect(row!.identity).not.toBe('predictions');
    expect(row!.review).toContain(
      'attention: predictions not sealed by the run: 2 of 2 scenario(s) were run without --predictions',
    );
  });

  it('ends a run whose table is all ✅ but a prediction is wrong with the reason for its exit 1', async () => {
    const wrong = join(root, 'wrong.yaml');
    writeFileSync(wrong, PREDICTED.replace('completed, exitCode: 0', 'cut, exitCode: 137'));
    const r = await runCli(
      ['run', '--sim', '--scenarios', scenarios, '--predictions', wrong, '--output-dir', join(root, 'wrong-run')],
      env,
    );
    expect(r.code, r.stderr).toBe(EXIT.checksFailed);
    expect(r.stdout).toContain('predictions: 0 of 1 right');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe("exit 1: 1 prediction differs from the model's answer");
    // A student reads why: the lab worked, the 1 grades the predictions.
    expect(r.stdout.trimEnd().split('\n').at(-2)).toMatch(
      /^the lab worked: every scenario ran and matches the model; exit 1 here grades your predictions, not the run/,
    );
  }, 120_000);

  it('flags a retried try and an interrupted run for review, with why', async () => {
    const dir = writeRunDir(join(root, 'work'), { student: 'Dee Retry', tag: 'dee' });
    const first = JSON.parse(readFileSync(join(dir, 'short-grace.observation.json'), 'utf8'));
    writeFileSync(
      join(dir, 'short-grace.attempt-2.observation.json'),
      JSON.stringify({ ...first, run: { ...first.run, attempt: 2 }, pod: { ...first.pod, uid: 'uid-dee-short-2' } }),
    );
    const restored = JSON.parse(readFileSync(join(dir, 'restored-grace.observation.json'), 'utf8'));
    restored.run.complete = false;
    restored.run.incompleteReason = 'interrupted (Ctrl-C) while terminating';
    writeFileSync(join(dir, 'restored-grace.observation.json'), JSON.stringify(restored));
    const r = await runCli(['grade', dir, '--gradebook-json', join(root, 'dee.json')], env);
    expect(r.code).toBe(EXIT.needsReview);
    const [row] = GradebookSchema.parse(JSON.parse(readFileSync(join(root, 'dee.json'), 'utf8'))).rows;
    expect(row!.review).toContain(
      `attention: retried: short-grace try 1 was run again; ${join(dir, 'short-grace.attempt-2.observation.json')} counts instead`,
    );
    expect(row!.review).toContain(
      'attention: interrupted: restored-grace: the run stopped before it finished: interrupted (Ctrl-C) while terminating',
    );
    // The student's own reports label the try that ran again instead of giving it a verdict.
    const html = join(root, 'dee.html');
    const md = join(root, 'dee.md');
    await runCli(['grade', dir, '--html', html, '--md', md], env);
    for (const page of [readFileSync(html, 'utf8'), readFileSync(md, 'utf8')]) {
      expect(page).toContain('short-grace (try 2)');
      // Its own times give no cause (a later try was added beside it): no cause is claimed.
      expect(page).toContain('↻ tried again');
      expect(page).not.toContain('request lost');
    }
  });

  it('catches sealed predictions edited inside an observation', async () => {
    const dir = writeRunDir(join(root, 'work'), { student: 'Cy Edit', tag: 'cy' });
    const path = join(dir, 'short-grace.observation.json');
    const o = JSON.parse(readFileSync(path, 'utf8'));
    o.run.predictions.content = o.run.predictions.content.replace('cut, exitCode: 137', 'completed, exitCode: 0');
    writeFileSync(path, JSON.stringify(o));
    const r = await runCli(['grade', path, '-o', 'json'], env);
    expect(r.code).toBe(EXIT.checksFailed);
    const [result] = JSON.parse(r.stdout).results;
    expect(result.checks).toContainEqual(
      expect.objectContaining({
        id: 'prediction.sealed',
        status: 'fail',
        reason: expect.stringContaining('the predictions were edited after the run sealed them'),
      }),
    );
  });
});
