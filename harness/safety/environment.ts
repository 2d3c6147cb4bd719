// The class environment (termlab.io/env) from --env or the lab file's `env`.
import { readLab } from '../class/lab.ts';
import { TermlabError } from '../../lib/errors.ts';
import { isLabelValue } from './labels.ts';

export async function environmentOf(values: { env?: string; lab?: string }): Promise<string | undefined> {
  if (values.env !== undefined) {
    if (!isLabelValue(values.env) || values.env === '')
      throw new TermlabError(
        'USAGE',
        `--env: ${JSON.stringify(values.env)} is not a valid label value (63 characters of A-Z a-z 0-9 - _ ., starting and ending alphanumeric)`,
      );
    return values.env;
  }
  return values.lab ? (await readLab(values.lab)).env : undefined;
}
