// The instructor's lab file: which scenarios and pairs count, points per check id, and whether
// predictions count. YAML, checked with zod; a bad one gets one line naming the file and field.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TermlabError } from '../../lib/errors.ts';
import { parseYamlText } from '../../lib/yaml-text.ts';
import { formatIssue } from '../../lib/files.ts';
import { isLabelValue } from '../safety/labels.ts';
import { packagePath } from '../../lib/package-root.ts';

export const DEFAULT_LAB = packagePath('manifests/lab.yaml');

const CheckId = z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/, 'a check id such as outcome.request or pair.grace');

const LabSchema = z.strictObject({
  name: z.string().min(1).max(64),
  /** The termlab.io/env label of this class's pods: `run` sets it, `reap --all-owners` needs it. */
  env: z
    .string()
    .refine(isLabelValue, 'a label value: 63 characters of A-Z a-z 0-9 - _ ., starting and ending alphanumeric')
    .optional(),
  /** Scenarios every submission must have; a missing one scores nothing and is listed. */
  requiredScenarios: z.array(z.string().min(1).max(64)).default([]),
  /** Lab pair ids (labPair.id in the scenarios) the gradebook reports and scores. */
  pairs: z.array(z.string().min(1).max(64)).default([]),
  /** Points for each passing check, per scenario; `pair.<id>` once per submission. */
  points: z.record(CheckId, z.number().min(0).max(1000)).default({}),
  /** Whether prediction.* checks add to the score. */
  countPredictions: z.boolean().default(false),
});
export type Lab = z.infer<typeof LabSchema>;

export async function readLab(path: string): Promise<Lab> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TermlabError('INPUT_UNREADABLE', `${path}: cannot read: ${(error as Error).message}`, { source: path });
  }
  const { data } = parseYamlText(text, path, 'LAB_INVALID');
  const parsed = LabSchema.safeParse(data);
  if (!parsed.success)
    throw new TermlabError('LAB_INVALID', `${path}: ${formatIssue(parsed.error.issues[0]!)}`, { source: path });
  return parsed.data;
}

/** Whether a check's points count under this lab. */
export function counts(lab: Lab, checkId: string): boolean {
  return lab.points[checkId] !== undefined && (lab.countPredictions || !checkId.startsWith('prediction.'));
}
