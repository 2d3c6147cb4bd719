// A verification file read back through its schema and graded: the one path `termlab verify` and
// `termlab grade` both take, so the verdict offline is the verdict the run printed.
import { stat } from 'node:fs/promises';
import { TermlabError } from '../../lib/errors.ts';
import { isObservationName } from '../grade/files.ts';
import { walkPaths } from '../grade/walk.ts';
import { isArchivePath } from '../pack/unpack.ts';
import { formatIssue, writeFileAtomic } from '../../lib/files.ts';
import { parseJsonText, readRegularTextFile } from '../observation/read.ts';
import { writeReport } from '../report/write.ts';
import { gradeVerification, type VerifyGrade } from './grade.ts';
import {
  MAX_VERIFICATION_BYTES,
  VERIFICATION_SCHEMA_VERSION,
  VERIFICATION_SUFFIX,
  type VerificationObservation,
  VerificationObservationSchema,
} from '../observation/verification.ts';
import { renderVerifyHtml, renderVerifyJunit, renderVerifyMarkdown } from './report.ts';

export function parseVerification(data: unknown, source: string): VerificationObservation {
  const version = (data as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== VERIFICATION_SCHEMA_VERSION)
    throw new TermlabError(
      'OBSERVATION_INVALID',
      `${source}: schemaVersion: this termlab reads verification files of version ${VERIFICATION_SCHEMA_VERSION}, the file says ${JSON.stringify(version ?? null)}`,
      { source, path: 'schemaVersion' },
    );
  const result = VerificationObservationSchema.safeParse(data);
  if (!result.success)
    throw new TermlabError('OBSERVATION_INVALID', `${source}: ${formatIssue(result.error.issues[0]!)}`, { source });
  return result.data;
}

export async function readVerification(path: string, signal?: AbortSignal): Promise<VerificationObservation> {
  const text = await readRegularTextFile(path, {
    maxBytes: MAX_VERIFICATION_BYTES,
    what: 'a verification file',
    signal,
  });
  return parseVerification(parseJsonText(text, path), path);
}

/** A pod's log line ({receivedAt, apiTime, text}): written on one line of its own. */
const isLogLine = (v: object) => 'text' in v && 'receivedAt' in v && 'apiTime' in v;

/**
 * The file's JSON in pieces: indented as before, but each log line on one line of its own. A run's load
 * logs a line per request, and indenting each one's receipt times cost ~11% of the file for nothing a
 * reader looks at. The same JSON, so any reader of this schema version reads it.
 */
export function verificationPieces(o: VerificationObservation): string[] {
  const out: string[] = [];
  const write = (value: unknown, pad: string): void => {
    if (value === null || typeof value !== 'object' || isLogLine(value)) {
      out.push(JSON.stringify(value) ?? 'null');
      return;
    }
    const inner = `${pad}  `;
    const array = Array.isArray(value);
    const entries = array
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
    if (!entries.length) {
      out.push(array ? '[]' : '{}');
      return;
    }
    out.push(array ? '[' : '{');
    entries.forEach(([key, v], i) => {
      out.push(i ? ',\n' : '\n', inner, array ? '' : `${JSON.stringify(key)}: `);
      write(v, inner);
    });
    out.push('\n', pad, array ? ']' : '}');
  };
  write(VerificationObservationSchema.parse(o), '');
  out.push('\n');
  return out;
}

/**
 * Writes the file atomically (a temporary file, then rename) in chunks: past MAX_VERIFICATION_BYTES it is
 * still written, as evidence kept, and may be longer than one string can be. Returns its size in bytes.
 */
export function writeVerification(path: string, o: VerificationObservation): Promise<number> {
  return writeFileAtomic(path, verificationPieces(o));
}

export const isVerificationPath = (path: string) => path.endsWith(VERIFICATION_SUFFIX);

/**
 * The paths `termlab grade` was given, with each folder that holds verification files and no observation
 * or archive (what `termlab verify` writes) replaced by its *.verification.json, found by the grader's own
 * walk (walk.ts); `problems`: the entries there that can never be read, one line each.
 */
export async function withVerificationFolders(paths: string[]): Promise<{ paths: string[]; problems: string[] }> {
  const out: string[] = [];
  const problems: string[] = [];
  for (const path of paths) {
    const folder = await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!folder) {
      out.push(path);
      continue;
    }
    const found: string[] = [];
    const unreadable: string[] = [];
    let observations = false;
    try {
      const wanted = (name: string) => isVerificationPath(name) || isObservationName(name) || isArchivePath(name);
      for await (const w of walkPaths([path], wanted)) {
        if (w.problem) unreadable.push(`${w.path}: ${w.problem}`);
        else if (isVerificationPath(w.path)) found.push(w.path);
        else {
          // Graded as observations: no need to walk a class's folder to its end twice.
          observations = true;
          break;
        }
      }
    } catch {
      // A folder that cannot be listed is the observation grader's to report.
      observations = true;
    }
    if (observations || !found.length) out.push(path);
    else {
      out.push(...found);
      problems.push(...unreadable);
    }
  }
  return { paths: out, problems };
}

export async function gradeVerificationFile(
  path: string,
  signal?: AbortSignal,
): Promise<{ grade: VerifyGrade; observation: VerificationObservation }> {
  const observation = await readVerification(path, signal);
  return { grade: gradeVerification(observation, { source: path }), observation };
}

export async function writeVerifyReports(
  grade: VerifyGrade,
  observation: VerificationObservation,
  targets: { md?: string; html?: string; junit?: string },
): Promise<void> {
  if (targets.md) await writeReport(targets.md, renderVerifyMarkdown(grade), 'the Markdown summary');
  if (targets.html) await writeReport(targets.html, renderVerifyHtml(grade, observation), 'the HTML report');
  if (targets.junit) await writeReport(targets.junit, renderVerifyJunit(grade), 'the JUnit report');
}
