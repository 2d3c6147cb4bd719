// A student's predictions, graded against what was observed and against the model.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TermlabError } from '../errors.ts';
import { parseYamlText } from '../yaml-text.ts';
import { formatIssue } from '../files.ts';
import { type SealedPredictions, SealedPredictionsSchema } from '../observation.ts';
import { readRegularTextFile } from '../observation-read.ts';
import type { Prediction } from './theory.ts';

/** A predictions file is a few lines of YAML; sealed into every observation, so kept small. */
const MAX_PREDICTIONS_BYTES = SealedPredictionsSchema.shape.content.maxLength ?? 64 * 1024;
import { fail, inconclusive, pass, type Check } from './types.ts';

const ExpectedSchema = z.object({
  outcome: z.enum(['completed', 'cut', 'rejected']),
  exitCode: z.int().min(0).max(255),
});
const PredictionsFileSchema = z.object({
  student: z.string().optional(),
  predictions: z.record(z.string(), ExpectedSchema),
});
export type PredictionsFile = z.infer<typeof PredictionsFileSchema>;

export function parsePredictions(text: string, source: string): PredictionsFile {
  const { data } = parseYamlText(text, source, 'PREDICTIONS_INVALID');
  const result = PredictionsFileSchema.safeParse(data);
  if (!result.success) throw new TermlabError('PREDICTIONS_INVALID', `${source}: ${formatIssue(result.error.issues[0]!)}`, { source });
  return result.data;
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
  if (actual !== sealed.sha256) return { problem: `run.predictions: the sealed content hashes to ${actual}, the file says ${sealed.sha256}: the predictions were edited after the run sealed them` };
  try { return { file: parsePredictions(sealed.content, `${source} run.predictions`) }; } catch (error) {
    return { problem: (error as Error).message };
  }
}

export function predictionChecks(
  file: PredictionsFile, scenario: string, observed: { outcome: string; exitCode: number | null }, model: Prediction,
): Check[] {
  // A scenario name comes from a file: only the file's own keys count, never Object.prototype's ("constructor").
  const expected = Object.hasOwn(file.predictions, scenario) ? file.predictions[scenario] : undefined;
  if (!expected) return [inconclusive('prediction.present', `no prediction for scenario ${scenario}`)];
  const said = `${expected.outcome}/${expected.exitCode}`;
  const seen = `${observed.outcome}/${observed.exitCode ?? '?'}`;
  const byModel = `${model.outcome}/${model.exitCode}`;
  return [
    said === seen
      ? pass('prediction.vs-observation', `you predicted ${said} and that is what happened`)
      : fail('prediction.vs-observation', `you predicted ${said}, the cluster did ${seen}`),
    said === byModel
      ? pass('prediction.vs-model', `your prediction ${said} agrees with the kubelet model`)
      : fail('prediction.vs-model', `you predicted ${said}, the kubelet model says ${byModel}: ${model.steps.join('; ')}`),
  ];
}
