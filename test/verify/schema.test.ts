// docs/verification.schema.json stays the zod schema's own JSON Schema, and a file of the wrong
// version or shape is refused by name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseVerification } from '../../harness/verify/files.ts';
import { verificationJsonSchema } from '../../harness/observation/verification.ts';
import { repoRoot } from '../support/processes.ts';

describe('the verification file', () => {
  it('keeps docs/verification.schema.json in sync with the zod schema', () => {
    expect(verificationJsonSchema()).toBe(readFileSync(join(repoRoot, 'docs', 'verification.schema.json'), 'utf8'));
  });

  it('refuses another version, and names the first wrong field', () => {
    expect(() => parseVerification({ kind: 'termlab.verification', schemaVersion: 2 }, 'x.verification.json')).toThrow(
      /schemaVersion: this termlab reads verification files of version 1, the file says 2/,
    );
    expect(() =>
      parseVerification({ kind: 'termlab.verification', schemaVersion: 1, run: {} }, 'x.verification.json'),
    ).toThrow(/^x\.verification\.json: /);
  });
});
