// A student's predictions, graded against what was observed and against the model.
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import { TermlabError } from '../../lib/errors.ts';
import { parseYamlText } from '../../lib/yaml-text.ts';
import { formatIssue } from '../../lib/files.ts';
import { type SealedPredictions, SealedPredictionsSchema } from '../observation/schema.ts';
import { readRegularTextFile } from '../observation/read.ts';
import { oneLine } from '../../lib/terminal.ts';
import type { Scenario } from '../scenario/schema.ts';
import { nearest } from '../../lib/suggest.ts';
import { describeRetries, predictRetries } from './retry-theory.ts';
import type { Prediction } from './theory.ts';

/** A predictions file is a few lines of YAML; sealed into every observation, so kept small. */
const MAX_PREDICTIONS_BYTES = SealedPredictionsSchema.shape.content.maxLength ?? 64 * 1024;
import { fail, inconclusive, pass, type Check } from './types.ts';

const EXPECTED_FIELDS = {
  outcome: z.enum(['completed', 'cut', 'rejected']),
  exitCode: z.int().min(0).max(255),
  /** A retry scenario's only: every attempt the client makes, the first included. */
  attempts: z.int().min(1).optional(),
  /** A retry scenario's only: the records the ledger applies (its already-applied answers are not effects). */
  effects: z.int().min(0).optional(),
};
// Strict: a misspelled field (`effect:`) is named, never dropped and the prediction graded without it.
const ExpectedSchema = z.strictObject(EXPECTED_FIELDS);
const PREDICTION_FIELDS = Object.keys(EXPECTED_FIELDS);
const RETRY_FIELDS = ['attempts', 'effects'] as const;
const PredictionsFileSchema = z.object({
  student: z.string().optional(),
  /** The scenario set the predictions were made for, as `--scenarios` named it; none: the default set. */
  scenarios: z.string().optional(),
  predictions: z.record(z.string(), ExpectedSchema),
});
export type PredictionsFile = z.infer<typeof PredictionsFileSchema>;
// A file an older termlab sealed or a student handed in was valid when written: its other fields are dropped, as
// they were then, so a class's saved observations regrade as before.
const WrittenEarlierSchema = PredictionsFileSchema.extend({
  predictions: z.record(z.string(), z.object(EXPECTED_FIELDS)),
});

/** `writtenEarlier`: the text was accepted before (sealed, handed in), so an unknown field is ignored, not refused. */
export function parsePredictions(
  text: string,
  source: string,
  options: { writtenEarlier?: boolean } = {},
): PredictionsFile {
  const key = `${options.writtenEarlier ? 'earlier' : 'new'}\0${text}`;
  const known = parsedEarlier.get(key);
  if (known) return known;
  const { data } = parseYamlText(text, source, 'PREDICTIONS_INVALID');
  const result = (options.writtenEarlier ? WrittenEarlierSchema : PredictionsFileSchema).safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new TermlabError('PREDICTIONS_INVALID', `${source}: ${blankOf(issue, data) ?? issueOf(issue)}`, { source });
  }
  if (parsedEarlier.size >= PARSED_KEPT) parsedEarlier.delete(parsedEarlier.keys().next().value!);
  parsedEarlier.set(key, deepFreeze(result.data));
  return result.data;
}

// Every observation of a run seals the same text, and a hand-in's predictions.yaml is that text again:
// a class is parsed once per run, not once per file (the YAML parse was most of a class's grading).
// Frozen: every result that text graded shares the one object. Only a text that parsed is kept.
const PARSED_KEPT = 64;
const parsedEarlier = new Map<string, PredictionsFile>();
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** What each field of a prediction asks for, as a blank left in a template is told to be filled in. */
const FIELD_ASKS: Record<string, string> = {
  outcome: 'completed, cut or rejected',
  exitCode: "the container's exit code, 0-255",
  attempts: 'how many times the client sends the request, 1 or more',
  effects: 'how many effects the ledger records, 0 or more',
};

/**
 * A `~` (null) left where a prediction goes, told as a blank to fill in with the scenario and the field, and how
 * many more there are; null when the issue is not about a blank.
 */
function blankOf(issue: z.core.$ZodIssue, data: unknown): string | null {
  const valueAt = (path: readonly PropertyKey[]) =>
    path.reduce<unknown>(
      (at, key) => (at && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined),
      data,
    );
  if (valueAt(issue.path) !== null) return null;
  const [top, scenario, field] = issue.path.map(String);
  if (top !== 'predictions' || scenario === undefined || field === undefined)
    return oneLine(`${issue.path.map(String).join('.')} is still ~: fill this in`);
  const predictions = valueAt(['predictions']) as Record<string, unknown>;
  const blanks = Object.values(predictions).reduce<number>(
    (n, p) => n + (p && typeof p === 'object' ? Object.values(p).filter((v) => v === null).length : 0),
    0,
  );
  const more = blanks > 1 ? `; ${blanks - 1} more ~ left to fill in` : '';
  return oneLine(
    `predictions.${scenario}.${field} is still ~: fill this in with your prediction for ${scenario}${FIELD_ASKS[field] ? ` (${FIELD_ASKS[field]})` : ''}${more}`,
    300,
  );
}

/** A field the file has and the schema does not is told with the field nearest it, as a scenario file's is. */
function issueOf(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'unrecognized_keys') return formatIssue(issue);
  const key = issue.keys[0]!;
  const near = nearest(key, PREDICTION_FIELDS);
  return oneLine(
    `${[...issue.path, key].map(String).join('.')}: \`${key}\` is not a prediction field${near ? `; did you mean \`${near}\`?` : ` (the prediction fields: ${PREDICTION_FIELDS.join(', ')})`}`,
  );
}

/**
 * The first prediction of attempts or effects for a scenario without a retry policy, as the file's field:
 * such a scenario makes one attempt and has no ledger, so there is nothing to hold the number against.
 */
export function retryFieldProblem(
  file: PredictionsFile,
  scenarios: readonly { name: string; retry?: unknown }[],
): string | null {
  for (const s of scenarios) {
    const expected = Object.hasOwn(file.predictions, s.name) ? file.predictions[s.name] : undefined;
    const field = RETRY_FIELDS.find((k) => expected?.[k] !== undefined);
    if (field && !s.retry)
      return oneLine(
        `predictions.${s.name}.${field}: ${s.name} has no retry policy (one attempt, no ledger): attempts and effects are predicted only for a retry scenario`,
        300,
      );
  }
  return null;
}

/**
 * Why a run of these scenarios cannot seal the file: a scenario it would run that the file has no prediction for,
 * told with the scenario set the file was made for and the command that runs what it predicts; null when covered.
 * `runScenarios` is the run's --scenarios as given (undefined: the default set).
 */
export function coverageProblem(
  file: PredictionsFile,
  source: string,
  names: readonly string[],
  runScenarios: string | undefined,
): string | null {
  const missing = names.filter((n) => !Object.hasOwn(file.predictions, n));
  if (!missing.length) return null;
  const predicted = Object.keys(file.predictions);
  const list = (xs: readonly string[]) => (xs.length > 4 ? `${xs.slice(0, 4).join(', ')}, …` : xs.join(', '));
  const made =
    file.scenarios === undefined ? 'the default scenarios (no --scenarios)' : `--scenarios ${file.scenarios}`;
  const sameSet =
    (file.scenarios === undefined ? undefined : resolve(file.scenarios)) ===
    (runScenarios === undefined ? undefined : resolve(runScenarios));
  const which =
    missing.length === names.length
      ? `none of the ${names.length} scenario(s) this run would run (${list(names)})`
      : `${names.length - missing.length} of the ${names.length} scenario(s) this run would run (none for ${list(missing)})`;
  const rerun = [
    'termlab run',
    ...(file.scenarios === undefined ? [] : [`--scenarios ${file.scenarios}`]),
    // Within the set it was made for, the scenarios it predicts; in another set, that set first.
    ...(sameSet && predicted.length ? [`--only ${predicted.join(',')}`] : []),
    `--predictions ${source}`,
  ].join(' ');
  return oneLine(
    `${source} has predictions for ${which}: it was made for ${made}${predicted.length ? `, predicting ${list(predicted)}` : ''}; nothing was sealed or started: ${rerun}`,
    600,
  );
}

export async function readPredictions(path: string): Promise<PredictionsFile> {
  return (await readSealable(path)).file;
}

export const predictionsSha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A predictions file read and parsed, with its text and hash: what `termlab run` seals. */
export async function readSealable(path: string): Promise<{ file: PredictionsFile; text: string; sha256: string }> {
  const text = await readRegularTextFile(path, { maxBytes: MAX_PREDICTIONS_BYTES, what: 'a predictions file' });
  return { file: parsePredictions(text, path), text, sha256: predictionsSha256(text) };
}

export function seal(text: string, at: Date = new Date()): SealedPredictions {
  return { sha256: predictionsSha256(text), sealedAt: at.toISOString(), content: text };
}

/** The sealed predictions of an observation; an error (never a parse of other text) when its hash does not match its content. */
export function unseal(sealed: SealedPredictions, source: string): { file: PredictionsFile } | { problem: string } {
  const actual = predictionsSha256(sealed.content);
  if (actual !== sealed.sha256)
    return {
      problem: `run.predictions: the sealed content hashes to ${actual}, the file says ${sealed.sha256}: the predictions were edited after the run sealed them`,
    };
  try {
    return { file: parsePredictions(sealed.content, `${source} run.predictions`, { writtenEarlier: true }) };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

/** What the run did, as the prediction's fields say it; a retry scenario's attempts and ledger effects, null when the file cannot tell. */
export interface Observed {
  outcome: string;
  exitCode: number | null;
  attempts?: number | null;
  effects?: number | null;
}

const plural = (n: number | string, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
/** "cut/137", and for each retry field the student gave, ", 2 attempts", ", 2 effects". */
function told(
  p: { outcome: string; exitCode: number | string; attempts?: number | string; effects?: number | string },
  fields: readonly (typeof RETRY_FIELDS)[number][],
): string {
  const counts = fields.map((k) => `, ${plural(p[k] ?? '?', k.slice(0, -1))}`);
  return `${p.outcome}/${p.exitCode}${counts.join('')}`;
}

export function predictionChecks(
  file: PredictionsFile,
  scenario: Scenario,
  observed: Observed,
  model: Prediction,
): Check[] {
  // A scenario name comes from a file: only the file's own keys count, never Object.prototype's ("constructor").
  const expected = Object.hasOwn(file.predictions, scenario.name) ? file.predictions[scenario.name] : undefined;
  if (!expected) return [inconclusive('prediction.present', `no prediction for scenario ${scenario.name}`)];
  // Attempts and effects are graded when the student gave them: a file without them is graded as before.
  const fields = RETRY_FIELDS.filter((k) => expected[k] !== undefined);
  const said = told(expected, fields);
  const wrongField = retryFieldProblem(file, [scenario]);
  if (wrongField)
    return [
      fail('prediction.vs-observation', wrongField),
      fail('prediction.vs-model', `you predicted ${said}, but ${wrongField}`),
    ];
  const retries = scenario.retry ? predictRetries(scenario, model.outcome) : null;
  const seen = told(
    {
      outcome: observed.outcome,
      exitCode: observed.exitCode ?? '?',
      attempts: observed.attempts ?? '?',
      effects: observed.effects ?? '?',
    },
    fields,
  );
  const byModel = told(
    { outcome: model.outcome, exitCode: model.exitCode, attempts: retries?.attempts.length, effects: retries?.effects },
    fields,
  );
  const why = [...model.steps, ...(retries && fields.length ? [describeRetries(retries)] : [])].join('; ');
  return [
    said === seen
      ? pass('prediction.vs-observation', `you predicted ${said} and that is what happened`)
      : fail('prediction.vs-observation', `you predicted ${said}, the cluster did ${seen}`),
    said === byModel
      ? pass('prediction.vs-model', `your prediction ${said} agrees with the kubelet model`)
      : fail('prediction.vs-model', `you predicted ${said}, the kubelet model says ${byModel}: ${why}`),
  ];
}
