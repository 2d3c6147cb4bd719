// The hand-in manifest: what a submission archive holds, each file's sha256, who packed it and with
// which termlab. A file that does not match its line is evidence that was changed after the run.
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const MANIFEST_NAME = 'manifest.json';
export const MANIFEST_KIND = 'termlab.submission';
export const MANIFEST_VERSION = 1;
export const PREDICTIONS_NAME = 'predictions.yaml';
export const ARCHIVE_SUFFIX = '.tar.gz';

/** Archives are flat: a member name has no directory part, so it can never point outside. */
export const MEMBER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A student's name is shown to the instructor: one line, printable, bounded. */
export const StudentSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}\p{Cf}]+$/u, 'one line of printable characters');

export const ManifestSchema = z.object({
  kind: z.literal(MANIFEST_KIND),
  version: z.literal(MANIFEST_VERSION),
  harnessVersion: z.string().max(64),
  student: StudentSchema.nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  runIds: z.array(z.string().max(128)).max(1000),
  files: z
    .array(
      z.object({
        path: z.string().regex(MEMBER_NAME, 'a plain file name'),
        sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits'),
        bytes: z.int().min(0),
      }),
    )
    .max(1000),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A run folder holding this file was interrupted (Ctrl-C): `termlab run` writes it, `termlab pack` refuses the folder. */
export const INTERRUPTED_MARKER = 'INTERRUPTED';
