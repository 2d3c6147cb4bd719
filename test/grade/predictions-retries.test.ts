// A retry scenario's predictions (issue 27): the attempts and the ledger's effects a student writes down
// before the run, graded against a recorded retries run and the retries model; a misspelled field is named.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { parsePredictions, seal } from '../../harness/grade/predictions.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { predictionShown } from '../../harness/report/format.ts';
import { templateText } from '../../harness/predict/file.ts';
import { loadScenarios } from '../../harness/scenario/load.ts';
import { EXIT } from '../../lib/errors.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const fixture = (name: string) =>
  parseObservationFile(
    JSON.parse(readFileSync(join(repoRoot, 'test/grade/fixtures/retries/sim', `${name}.observation.json`), 'utf8')),
    name,
  ).observation;
const checksOf = (name: string, yaml: string) =>
  grade(fixture(name), { predictionsOverride: parsePredictions(yaml, 'p.yaml') }).checks.filter((c) =>
    c.id.startsWith('prediction.'),
  );

describe("predicting a retry scenario's attempts and effects", () => {
  it('grades a right effect count as right, against the ledger and the model', () => {
    // The recorded run: attempt 1 cut by SIGKILL after the effect, the retry did it again: 2 attempts, 2 effects.
    const checks = checksOf(
      'retry-doubles-effect',
      'predictions:\n  retry-doubles-effect: { outcome: cut, exitCode: 137, attempts: 2, effects: 2 }\n',
    );
    expect(checks.map((c) => [c.id, c.status, c.reason])).toEqual([
      ['prediction.vs-observation', 'pass', 'you predicted cut/137, 2 attempts, 2 effects and that is what happened'],
      ['prediction.vs-model', 'pass', 'your prediction cut/137, 2 attempts, 2 effects agrees with the kubelet model'],
    ]);
    expect(predictionShown({ checks })).toEqual({ right: true, text: '✓ cut/137, 2 attempts, 2 effects' });
  });

  it('grades a wrong effect count as wrong, saying what the ledger recorded and how the model saw it', () => {
    // The student who forgot the key: one effect is what the key buys, not what happened here.
    const checks = checksOf(
      'retry-doubles-effect',
      'predictions:\n  retry-doubles-effect:\n    outcome: cut\n    exitCode: 137\n    effects: 1\n',
    );
    expect(checks[0]).toEqual({
      id: 'prediction.vs-observation',
      status: 'fail',
      reason: 'you predicted cut/137, 1 effect, the cluster did cut/137, 2 effects',
    });
    expect(checks[1]!.status).toBe('fail');
    expect(checks[1]!.reason).toMatch(
      /^you predicted cut\/137, 1 effect, the kubelet model says cut\/137, 2 effects: .*retries: attempt 1 to the deleted pod cut, effect applied; attempt 2 to the standby pod completed, effect applied → 2 effect\(s\)$/,
    );
    expect(predictionShown({ checks })).toEqual({
      right: false,
      text: '✗ cut/137, 1 effect — the model says cut/137, 2 effects',
    });
    // With the key the same count is right: the ledger applied once and answered the retry already-applied.
    expect(
      checksOf(
        'retry-with-key',
        'predictions:\n  retry-with-key: { outcome: cut, exitCode: 137, attempts: 2, effects: 1 }\n',
      ).map((c) => c.status),
    ).toEqual(['pass', 'pass']);
    // Wrong attempts: no retry is predicted where the run made one.
    expect(
      checksOf(
        'retry-effect-at-end',
        'predictions:\n  retry-effect-at-end: { outcome: cut, exitCode: 137, attempts: 1 }\n',
      )[0]!.reason,
    ).toBe('you predicted cut/137, 1 attempt, the cluster did cut/137, 2 attempts');
  });

  it('grades a file without attempts or effects as before', () => {
    expect(
      checksOf(
        'retry-after-graceful',
        'predictions:\n  retry-after-graceful: { outcome: completed, exitCode: 0 }\n',
      ).map((c) => c.reason),
    ).toEqual([
      'you predicted completed/0 and that is what happened',
      'your prediction completed/0 agrees with the kubelet model',
    ]);
  });

  it('names a misspelled field and the one nearest it, and refuses counts out of range', () => {
    expect(() =>
      parsePredictions('predictions:\n  retry-with-key: { outcome: cut, exitCode: 137, effect: 1 }\n', 'p.yaml'),
    ).toThrow('p.yaml: predictions.retry-with-key.effect: `effect` is not a prediction field; did you mean `effects`?');
    expect(() =>
      parsePredictions('predictions:\n  retry-with-key: { outcome: cut, exitCode: 137, attempts: 0 }\n', 'p.yaml'),
    ).toThrow(/p\.yaml: predictions\.retry-with-key\.attempts: /);
    expect(() =>
      parsePredictions('predictions:\n  retry-with-key: { outcome: cut, exitCode: 137, effects: -1 }\n', 'p.yaml'),
    ).toThrow(/p\.yaml: predictions\.retry-with-key\.effects: /);
  });

  it('fails attempts or effects predicted for a scenario without a retry policy, naming the scenario and the field', () => {
    const o = parseObservationFile(
      JSON.parse(readFileSync(join(repoRoot, 'test/grade/fixtures/v1-cut-137-after-grace.observation.json'), 'utf8')),
      'v1',
    ).observation;
    const name = o.scenario.name;
    const checks = grade(o, {
      predictionsOverride: parsePredictions(
        `predictions:\n  ${name}: { outcome: cut, exitCode: 137, effects: 0 }\n`,
        'p.yaml',
      ),
    }).checks.filter((c) => c.id.startsWith('prediction.'));
    expect(checks.map((c) => c.status)).toEqual(['fail', 'fail']);
    expect(checks[0]!.reason).toBe(
      `predictions.${name}.effects: ${name} has no retry policy (one attempt, no ledger): attempts and effects are predicted only for a retry scenario`,
    );
  });
});

describe('termlab run --predictions', () => {
  it('refuses effects for a scenario without a retry policy before it seals the file or starts a cluster', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'termlab-predretry-')), 'p.yaml');
    writeFileSync(file, 'predictions:\n  short-grace: { outcome: cut, exitCode: 137, effects: 1 }\n');
    const r = await runCli(['run', '--sim', '--only', 'short-grace', '--predictions', file]);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain(`${file}: predictions.short-grace.effects: short-grace has no retry policy`);
    expect(r.stdout).not.toContain('predictions sealed');
  });
});

describe('the predictions template of a retry scenario', () => {
  it('has attempts and effects to fill in for each retry scenario, and only there', async () => {
    const retries = await loadScenarios(join(repoRoot, 'manifests/retries.yaml'), ['retry-doubles-effect']);
    const plain = await loadScenarios(undefined, ['short-grace']);
    const text = templateText([...retries, ...plain], 'Ada');
    expect(text).toMatch(
      / {2}retry-doubles-effect:\n {4}# [^\n]+\n {4}outcome: ~\n {4}exitCode: ~\n {4}attempts: ~\n {4}effects: ~\n {2}short-grace:\n {4}# [^\n]+\n {4}outcome: ~\n {4}exitCode: ~\n$/,
    );
    expect(text).toMatch(/^# {3}effects \(a retry scenario\): /m);
    expect(() => parsePredictions(text, 't.yaml')).toThrow(/predictions\.retry-doubles-effect\.outcome/);
    const filled = text
      .replace('outcome: ~', 'outcome: cut')
      .replace('exitCode: ~', 'exitCode: 137')
      .replace('attempts: ~', 'attempts: 2')
      .replace('effects: ~', 'effects: 2')
      .replace('outcome: ~', 'outcome: cut')
      .replace('exitCode: ~', 'exitCode: 137');
    expect(parsePredictions(filled, 't.yaml').predictions).toEqual({
      'retry-doubles-effect': { outcome: 'cut', exitCode: 137, attempts: 2, effects: 2 },
      'short-grace': { outcome: 'cut', exitCode: 137 },
    });
    // A template of scenarios without retries says nothing of attempts or effects.
    expect(templateText(plain, 'Ada')).not.toMatch(/attempts|effects/);
  });

  it('regrades a file an older termlab sealed with a field it ignored then, as it graded it then', () => {
    // Sealed before predictions were strict: `note:` was dropped then, and is dropped again now.
    const text = 'predictions:\n  retry-doubles-effect: { outcome: cut, exitCode: 137, note: guessed }\n';
    expect(() => parsePredictions(text, 'p.yaml')).toThrow(/`note` is not a prediction field/);
    const sealed = { ...fixture('retry-doubles-effect') };
    sealed.run = { ...sealed.run, predictions: seal(text) };
    const checks = grade(sealed).checks.filter((c) => c.id.startsWith('prediction.'));
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ['prediction.vs-observation', 'pass'],
      ['prediction.vs-model', 'pass'],
    ]);
  });
});
