// Opening a hand-in archive to grade it: extracted into a fresh temporary directory, flat plain files
// only, each member and the whole bounded. Anything else refuses the whole archive: a submission
// with a link or a path that climbs out is not one to half-trust.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import { TermlabError } from '../errors.ts';
import { formatIssue, MAX_OBSERVATION_BYTES } from '../observation.ts';
import { readRegularFile } from '../observation-read.ts';
import { ARCHIVE_SUFFIX, MANIFEST_NAME, ManifestSchema, MEMBER_NAME, sha256, type Manifest } from './manifest.ts';

const OBSERVATION_SUFFIX = '.observation.json';

export const ARCHIVE_LIMITS = {
  /** The compressed archive as handed in. */
  archiveBytes: 64 * 1024 * 1024,
  /** One member: no file in a submission is larger than an observation may be. */
  memberBytes: MAX_OBSERVATION_BYTES,
  /** All members together, uncompressed (held in memory while the archive is checked). */
  totalBytes: 64 * 1024 * 1024,
  members: 1000,
  /** Gzip that expands more than this is a bomb, not a run. */
  decompressionRatio: 200,
};

export function isArchivePath(path: string): boolean {
  return path.endsWith(ARCHIVE_SUFFIX) || path.endsWith('.tgz');
}

export interface OpenedArchive {
  archive: string;
  /** Its observation files, for gradePaths. */
  dir: string;
  /** Every member, checked or not (see `untrusted`). */
  files: Map<string, Buffer>;
  manifest: Manifest | null;
  /** Member name -> why it cannot be trusted (hash mismatch, not in the manifest). */
  untrusted: Map<string, string>;
  /** Whole-archive problems: no manifest, a listed file missing. */
  problems: string[];
  close(): Promise<void>;
}

function refuse(archive: string, reason: string): TermlabError {
  return new TermlabError('ARCHIVE_INVALID', `${archive}: ${reason}; the archive was refused`, { source: archive });
}

/** Why an entry may not be extracted, or null when it is a plain file within the limits. */
function entryProblem(entry: ReadEntry, seen: { members: number; bytes: number }): string | null {
  const name = JSON.stringify(entry.path);
  if (entry.type !== 'File' && entry.type !== 'OldFile') return `member ${name} is a ${entry.type}, and only plain files are accepted`;
  if (!MEMBER_NAME.test(entry.path)) return `member ${name} is not a plain file name (no directories, no "..", no absolute paths)`;
  if (++seen.members > ARCHIVE_LIMITS.members) return `more than ${ARCHIVE_LIMITS.members} members`;
  if (entry.size > ARCHIVE_LIMITS.memberBytes) return `member ${name} is ${entry.size} bytes, over the ${ARCHIVE_LIMITS.memberBytes}-byte limit`;
  seen.bytes += entry.size;
  if (seen.bytes > ARCHIVE_LIMITS.totalBytes) return `members add up to more than ${ARCHIVE_LIMITS.totalBytes} bytes`;
  return null;
}

/**
 * Reads the members into memory (bounded by the limits above) and writes them, flat, into `dir`.
 * node-tar only parses here: no path it names is ever handed to the file system.
 */
async function extract(archive: string, dir: string, signal?: AbortSignal): Promise<Map<string, Buffer>> {
  // Only a regular file, read whole within the size and time limits (a FIFO or device is refused unread).
  const bytes = await readRegularFile(archive, { maxBytes: ARCHIVE_LIMITS.archiveBytes, what: 'a submission', signal });
  const seen = { members: 0, bytes: 0 };
  const members = new Map<string, Buffer[]>();
  let refused: string | null = null;
  await new Promise<void>((resolve, reject) => {
    const parser: Parser = new Parser({
      strict: true, maxDecompressionRatio: ARCHIVE_LIMITS.decompressionRatio,
      filter: (_path, stats) => {
        if (refused) return false;
        const entry = stats as ReadEntry;
        const problem = entryProblem(entry, seen) ?? (members.has(entry.path) ? `member ${JSON.stringify(entry.path)} appears twice` : null);
        if (problem) { refused = problem; parser.abort(refuse(archive, problem)); }
        return problem === null;
      },
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        members.set(entry.path, chunks);
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      },
    });
    parser.on('error', (error: Error) => { reject(refused ? refuse(archive, refused) : refuse(archive, `not a readable .tar.gz (${error.message})`)); });
    parser.on('end', () => (refused ? reject(refuse(archive, refused)) : resolve()));
    parser.end(bytes);
  });
  const files = new Map<string, Buffer>();
  for (const [name, chunks] of members) {
    const data = Buffer.concat(chunks);
    // Only what gradePaths reads goes to disk; 'wx' into a fresh directory, flat names checked above.
    if (name.endsWith(OBSERVATION_SUFFIX)) await writeFile(join(dir, name), data, { flag: 'wx' });
    files.set(name, data);
  }
  return files;
}

function readManifest(archive: string, text: Buffer | undefined): Manifest | null {
  if (text === undefined) return null;
  let data: unknown;
  try { data = JSON.parse(text.toString('utf8')); } catch (error) { throw refuse(archive, `${MANIFEST_NAME}: not JSON: ${(error as Error).message}`); }
  const parsed = ManifestSchema.safeParse(data);
  if (!parsed.success) throw refuse(archive, `${MANIFEST_NAME}: ${formatIssue(parsed.error.issues[0]!)}`);
  return parsed.data;
}

/** Extracts and checks an archive against its manifest; the caller grades `dir` and then closes it. */
export async function openArchive(archive: string, signal?: AbortSignal): Promise<OpenedArchive> {
  const dir = await mkdtemp(join(tmpdir(), 'termlab-submission-'));
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    const files = await extract(archive, dir, signal);
    const manifest = readManifest(archive, files.get(MANIFEST_NAME));
    const untrusted = new Map<string, string>();
    const problems: string[] = [];
    const present = [...files.keys()].filter((n) => n !== MANIFEST_NAME).sort();
    if (!manifest) {
      problems.push(`${archive}: evidence invalid: no ${MANIFEST_NAME}, so nothing in it can be checked (pack runs with \`termlab pack\`)`);
      for (const name of present) untrusted.set(name, `the archive has no ${MANIFEST_NAME}`);
    } else {
      const listed = new Map(manifest.files.map((f) => [f.path, f]));
      for (const name of present) {
        const line = listed.get(name);
        if (!line) { untrusted.set(name, `${name} is not in the archive's manifest`); continue; }
        const hash = sha256(files.get(name)!);
        if (hash !== line.sha256) untrusted.set(name, `${name} does not match its sha256 in the manifest: it was changed after packing`);
      }
      for (const name of listed.keys()) if (!present.includes(name)) problems.push(`${archive}: evidence invalid: the manifest lists ${name} but the archive lacks it`);
      for (const [name, why] of untrusted) problems.push(`${archive}:${name}: evidence invalid: ${why}`);
    }
    return { archive, dir, files, manifest, untrusted, problems, close };
  } catch (error) {
    await close();
    throw error;
  }
}
