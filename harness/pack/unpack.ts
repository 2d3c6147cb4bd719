// Opening a hand-in archive to grade it: its members read into memory, flat plain files only, each
// member and the whole bounded; nothing of it reaches the file system. Anything else refuses the whole archive: a submission
// with a link or a path that climbs out is not one to half-trust.
import { Parser, type ReadEntry } from 'tar';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { TermlabError } from '../../lib/errors.ts';
import { formatIssue } from '../../lib/files.ts';
import { MAX_OBSERVATION_BYTES } from '../observation/schema.ts';
import { readRegularFile } from '../observation/read.ts';
import { ARCHIVE_SUFFIX, MANIFEST_NAME, ManifestSchema, MEMBER_NAME, sha256, type Manifest } from './manifest.ts';

const OBSERVATION_SUFFIX = '.observation.json';

const ARCHIVE_LIMITS = {
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

/** What a hand-in may be: the `.tar.gz` that `termlab pack` writes, or the same run re-wrapped (`.tgz`, `.tar`, `.zip`). */
const ARCHIVE_SUFFIXES = [ARCHIVE_SUFFIX, '.tgz', '.tar', '.zip'] as const;

export function isArchivePath(path: string): boolean {
  const lower = path.toLowerCase();
  return ARCHIVE_SUFFIXES.some((suffix) => lower.endsWith(suffix));
}

/** The submission's name without its archive suffix. */
export function archiveStem(name: string): string {
  const suffix = ARCHIVE_SUFFIXES.find((s) => name.toLowerCase().endsWith(s));
  return suffix ? name.slice(0, -suffix.length) : name;
}

export interface OpenedArchive {
  archive: string;
  /** Every member, checked or not (see `untrusted`); the observations are graded from here (gradeMembers). */
  files: Map<string, Buffer>;
  manifest: Manifest | null;
  /** Member name -> why it cannot be trusted (hash mismatch, not in the manifest). */
  untrusted: Map<string, string>;
  /** Whole-archive problems: no manifest, a listed file missing. A distrusted member is in `untrusted`, not here. */
  problems: string[];
}

function refuse(archive: string, reason: string): TermlabError {
  return new TermlabError('ARCHIVE_INVALID', `${archive}: ${reason}; the archive was refused`, { source: archive });
}

/** Why an entry may not be extracted, or null when it is a plain file within the limits. */
function entryProblem(entry: ReadEntry, seen: { members: number; bytes: number }): string | null {
  const name = JSON.stringify(entry.path);
  if (entry.type !== 'File' && entry.type !== 'OldFile')
    return `member ${name} is a ${entry.type}, and only plain files are accepted`;
  if (!MEMBER_NAME.test(entry.path))
    return `member ${name} is not a plain file name (no directories, no "..", no absolute paths)`;
  if (++seen.members > ARCHIVE_LIMITS.members) return `more than ${ARCHIVE_LIMITS.members} members`;
  if (entry.size > ARCHIVE_LIMITS.memberBytes)
    return `member ${name} is ${entry.size} bytes, over the ${ARCHIVE_LIMITS.memberBytes}-byte limit`;
  seen.bytes += entry.size;
  if (seen.bytes > ARCHIVE_LIMITS.totalBytes) return `members add up to more than ${ARCHIVE_LIMITS.totalBytes} bytes`;
  return null;
}

type Members = Map<string, Buffer>;

/** A tar, gzipped or not (node-tar tells them apart); node-tar only parses: no path it names reaches the file system. */
async function tarMembers(archive: string, bytes: Buffer): Promise<Members> {
  const seen = { members: 0, bytes: 0 };
  const members = new Map<string, Buffer[]>();
  let refused: string | null = null;
  await new Promise<void>((resolve, reject) => {
    const parser: Parser = new Parser({
      strict: true,
      maxDecompressionRatio: ARCHIVE_LIMITS.decompressionRatio,
      filter: (_path, stats) => {
        if (refused) return false;
        const entry = stats as ReadEntry;
        const problem =
          entryProblem(entry, seen) ??
          (members.has(entry.path) ? `member ${JSON.stringify(entry.path)} appears twice` : null);
        if (problem) {
          refused = problem;
          parser.abort(refuse(archive, problem));
        }
        return problem === null;
      },
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        members.set(entry.path, chunks);
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      },
    });
    parser.on('error', (error: Error) => {
      reject(
        refused ? refuse(archive, refused) : refuse(archive, `not a readable .tar.gz, .tar or .zip (${error.message})`),
      );
    });
    parser.on('end', () => (refused ? reject(refuse(archive, refused)) : resolve()));
    parser.end(bytes);
  });
  return new Map([...members].map(([name, chunks]) => [name, Buffer.concat(chunks)]));
}

/** What macOS's "Compress" adds beside the real files: resource forks, never evidence. */
const MACOS_FORK = /^__MACOSX\//;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/** Why a zip entry may not be read, or null when it is a plain flat file within the limits. */
function zipEntryProblem(entry: Entry, seen: { members: number; bytes: number }): string | null {
  const name = JSON.stringify(entry.fileName);
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (entry.fileName.endsWith('/')) return `member ${name} is a directory, and only plain files are accepted`;
  if (mode !== 0 && mode !== S_IFREG)
    return `member ${name} is not a plain file (a link or a device), and only plain files are accepted`;
  if (!MEMBER_NAME.test(entry.fileName))
    return `member ${name} is not a plain file name (no directories, no "..", no absolute paths)`;
  if (++seen.members > ARCHIVE_LIMITS.members) return `more than ${ARCHIVE_LIMITS.members} members`;
  if (entry.uncompressedSize > ARCHIVE_LIMITS.memberBytes)
    return `member ${name} is ${entry.uncompressedSize} bytes, over the ${ARCHIVE_LIMITS.memberBytes}-byte limit`;
  if (entry.uncompressedSize > ARCHIVE_LIMITS.decompressionRatio * Math.max(entry.compressedSize, 1))
    return `member ${name} expands more than ${ARCHIVE_LIMITS.decompressionRatio}-fold`;
  seen.bytes += entry.uncompressedSize;
  if (seen.bytes > ARCHIVE_LIMITS.totalBytes) return `members add up to more than ${ARCHIVE_LIMITS.totalBytes} bytes`;
  return null;
}

/** A zip, read with yauzl from memory; sizes are checked against the entry and while reading. */
async function zipMembers(archive: string, bytes: Buffer): Promise<Members> {
  const bad = (why: string) => refuse(archive, why);
  const zip = await new Promise<ZipFile>((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (error, file) =>
      error ? reject(bad(`not a readable .zip (${error.message})`)) : resolve(file),
    );
  });
  const seen = { members: 0, bytes: 0 };
  const members: Members = new Map();
  return new Promise<Members>((resolve, reject) => {
    const stop = (error: TermlabError) => {
      zip.close();
      reject(error);
    };
    zip.on('error', (error: Error) => stop(bad(`not a readable .zip (${error.message})`)));
    zip.on('end', () => resolve(members));
    zip.on('entry', (entry: Entry) => {
      if (MACOS_FORK.test(entry.fileName)) {
        zip.readEntry();
        return;
      }
      const problem =
        zipEntryProblem(entry, seen) ??
        (members.has(entry.fileName) ? `member ${JSON.stringify(entry.fileName)} appears twice` : null);
      if (problem) {
        stop(bad(problem));
        return;
      }
      zip.openReadStream(entry, (error, stream) => {
        if (error) {
          stop(bad(`member ${JSON.stringify(entry.fileName)}: ${error.message}`));
          return;
        }
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', (e: Error) => stop(bad(`member ${JSON.stringify(entry.fileName)}: ${e.message}`)));
        stream.on('end', () => {
          members.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
}

/** A hand-in that only wraps the packed run (a `.zip` of the `.tar.gz`): the run inside is the submission. */
function wrappedPack(members: Members): Buffer | null {
  if (members.size !== 1) return null;
  const [name, data] = [...members][0]!;
  return !isArchivePath(name) || name.toLowerCase().endsWith('.zip') ? null : data;
}

const isZip = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50;

/**
 * Reads the members into memory (bounded by the limits above).
 * The format is told by the bytes, not the name: a renamed file still opens.
 */
async function extract(archive: string, signal?: AbortSignal): Promise<Members> {
  // Only a regular file, read whole within the size and time limits (a FIFO or device is refused unread).
  const bytes = await readRegularFile(archive, { maxBytes: ARCHIVE_LIMITS.archiveBytes, what: 'a submission', signal });
  let files = isZip(bytes) ? await zipMembers(archive, bytes) : await tarMembers(archive, bytes);
  const inner = wrappedPack(files);
  if (inner) files = await tarMembers(archive, inner);
  if (!files.has(MANIFEST_NAME) && ![...files.keys()].some((n) => n.endsWith(OBSERVATION_SUFFIX))) {
    throw new TermlabError(
      'ARCHIVE_INVALID',
      `${archive}: not a termlab archive (no ${MANIFEST_NAME}, no observations) — hand in the ${ARCHIVE_SUFFIX} that \`termlab pack\` wrote`,
      { source: archive },
    );
  }
  return files;
}

function readManifest(archive: string, text: Buffer | undefined): Manifest | null {
  if (text === undefined) return null;
  let data: unknown;
  try {
    data = JSON.parse(text.toString('utf8'));
  } catch (error) {
    throw refuse(archive, `${MANIFEST_NAME}: not JSON: ${(error as Error).message}`);
  }
  const parsed = ManifestSchema.safeParse(data);
  if (!parsed.success) throw refuse(archive, `${MANIFEST_NAME}: ${formatIssue(parsed.error.issues[0]!)}`);
  return parsed.data;
}

/** Reads and checks an archive against its manifest; the caller grades its members. */
export async function openArchive(archive: string, signal?: AbortSignal): Promise<OpenedArchive> {
  const files = await extract(archive, signal);
  const manifest = readManifest(archive, files.get(MANIFEST_NAME));
  const untrusted = new Map<string, string>();
  const problems: string[] = [];
  const present = [...files.keys()].filter((n) => n !== MANIFEST_NAME).sort();
  if (!manifest) {
    for (const name of present)
      untrusted.set(
        name,
        `the archive has no ${MANIFEST_NAME}, so nothing in it can be checked (pack runs with \`termlab pack\`)`,
      );
  } else {
    const listed = new Map(manifest.files.map((f) => [f.path, f]));
    for (const name of present) {
      const line = listed.get(name);
      if (!line) {
        untrusted.set(name, `${name} is not in the archive's manifest`);
        continue;
      }
      const hash = sha256(files.get(name)!);
      if (hash !== line.sha256)
        untrusted.set(name, `${name} does not match its sha256 in the manifest: it was changed after packing`);
    }
    for (const name of listed.keys())
      if (!present.includes(name))
        problems.push(`${archive}: evidence invalid: the manifest lists ${name} but the archive lacks it`);
  }
  return { archive, files, manifest, untrusted, problems };
}
