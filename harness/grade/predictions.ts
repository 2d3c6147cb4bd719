// A student's predictions, graded against what was observed and against the model.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { TermlabError } from '../errors.ts';
import { formatIssue, oneLine } from '../observation.ts';
import { readRegularTextFile } from '../observation-read.ts';

/** A predictions file is a few lines of YAML. */
const MAX_PREDICTIONS_BYTES = 1024 * 1024;
import type { Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';

const ExpectedSchema = z.object({
  outcome: z.enum(['completed', 'cut', 'rejected']),
  exitCode: z.int().min(0).max(255),
});
export const PredictionsFileSchema = z.object({
  student: z.string().optional(),
  predictions: z.record(z.string(), ExpectedSchema),
});
export type PredictionsFile = z.infer<typeof PredictionsFileSchema>;

export function parsePredictions(text: string, source: string): PredictionsFile {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new TermlabError('PREDICTIONS_INVALID', `${source}: not YAML: ${oneLine((error as Error).message.split('\n')[0]!)}`, { source });
  }
  const result = PredictionsFileSchema.safeParse(data);
  if (!result.success) throw new TermlabError('PREDICTIONS_INVALID', `${source}: ${formatIssue(result.error.issues[0]!)}`, { source });
  return result.data;
}

export async function readPredictions(path: string): Promise<PredictionsFile> {
  return parsePredictions(await readRegularTextFile(path, { maxBytes: MAX_PREDICTIONS_BYTES, what: 'a predictions file' }), path);
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
