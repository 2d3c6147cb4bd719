// Reading observation files: only regular files, within a size and a time limit, strict UTF-8,
// JSON, then the zod schema of their version. One line per problem, naming the file and the field.
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { z } from 'zod';
import { TermlabError } from '../../lib/errors.ts';
import { issuePath } from '../../lib/issues.ts';
import { oneLine } from '../../lib/terminal.ts';
import {
  MAX_OBSERVATION_BYTES,
  OBSERVATION_SCHEMA_VERSION,
  ObservationSchema,
  ObservationV2Schema,
  ObservationV3Schema,
  ObservationV4Schema,
  ObservationV5Schema,
  ObservationV6Schema,
  READ_TIME_LIMIT_MS,
  READABLE_OLD_VERSIONS,
  type Observation,
} from './schema.ts';
import { ObservationV1Schema, upgradeV1 } from './v1.ts';
import { type EdgeObservation, EDGE_SCHEMA_VERSION, EdgeObservationSchema, isEdgeObservation } from './edge.ts';
import {
  isRolloutObservation,
  ROLLOUT_SCHEMA_VERSION,
  RolloutObservationSchema,
  type RolloutObservation,
} from './rollout.ts';

export interface ParsedObservation {
  observation: Observation;
  /** The version the file was written in; older ones are upgraded in memory, never rewritten. */
  fileVersion: number;
}

function invalid(source: string, path: string, message: string): TermlabError {
  return new TermlabError('OBSERVATION_INVALID', `${source}: ${oneLine(path || '(top level)')}: ${oneLine(message)}`, {
    source,
    path,
  });
}

export function parseObservationFile(data: unknown, source: string): ParsedObservation {
  const version = (data as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (data && typeof data === 'object' && version === 1) {
    const result = ObservationV1Schema.safeParse(data);
    if (!result.success) throw schemaProblem(result.error, source);
    return { observation: upgradeV1(result.data), fileVersion: 1 };
  }
  if (
    data &&
    typeof data === 'object' &&
    (version === 2 || version === 3 || version === 4 || version === 5 || version === 6)
  ) {
    const result = (
      version === 2
        ? ObservationV2Schema
        : version === 3
          ? ObservationV3Schema
          : version === 4
            ? ObservationV4Schema
            : version === 5
              ? ObservationV5Schema
              : ObservationV6Schema
    ).safeParse(data);
    if (!result.success) throw schemaProblem(result.error, source);
    return { observation: { ...result.data, schemaVersion: OBSERVATION_SCHEMA_VERSION }, fileVersion: version };
  }
  if (data && typeof data === 'object' && version !== undefined && version !== OBSERVATION_SCHEMA_VERSION) {
    throw invalid(
      source,
      'schemaVersion',
      `this termlab reads versions ${[...READABLE_OLD_VERSIONS, OBSERVATION_SCHEMA_VERSION].join(', ')}, the file says ${JSON.stringify(version)}`,
    );
  }
  const result = ObservationSchema.safeParse(data);
  if (!result.success) throw schemaProblem(result.error, source);
  return { observation: result.data, fileVersion: OBSERVATION_SCHEMA_VERSION };
}

function schemaProblem(error: z.ZodError, source: string): TermlabError {
  const first = error.issues[0]!;
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  const problem = invalid(source, issuePath(first, ''), `${first.message}${more}`);
  problem.context.issues = error.issues.length;
  return problem;
}

/**
 * Reads a regular file as strict UTF-8, within a size and a time limit. FIFOs, devices and sockets
 * are refused before a byte is read: the open itself does not wait for a writer (O_NONBLOCK).
 */
export async function readRegularTextFile(
  path: string,
  options: { maxBytes: number; what: string; signal?: AbortSignal },
): Promise<string> {
  return decodeUtf8(await readRegularFile(path, options), path, options.what);
}

function decodeUtf8(bytes: Buffer, source: string, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new TermlabError(
      what === 'an observation' ? 'OBSERVATION_INVALID' : 'INPUT_UNREADABLE',
      `${source}: not valid UTF-8 (byte ${firstBadUtf8(bytes)})`,
      { source },
    );
  }
}

type ReadLimits = { maxBytes: number; what: string };
const unreadableFile = (path: string, why: string, cause?: unknown) =>
  new TermlabError('INPUT_UNREADABLE', `${path}: ${oneLine(why)}`, { source: path }, { cause });
const cannotOpen = (path: string, error: unknown) =>
  unreadableFile(
    path,
    (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `cannot open: ${(error as Error).message}`,
    error,
  );
const tooLarge = (path: string, options: ReadLimits, size?: number) =>
  new TermlabError(
    'INPUT_TOO_LARGE',
    size === undefined
      ? `${path}: larger than the ${options.maxBytes}-byte limit for ${options.what}`
      : `${path}: ${size} bytes is larger than the ${options.maxBytes}-byte limit for ${options.what}`,
    { source: path },
  );

/** Only a regular file within the size limit is read. */
function checkOpened(path: string, info: Stats, options: ReadLimits): void {
  if (!info.isFile())
    throw unreadableFile(
      path,
      `not a regular file (a ${info.isDirectory() ? 'directory' : info.isFIFO() ? 'FIFO' : info.isSocket() ? 'socket' : 'device'}): refused`,
    );
  if (info.size > options.maxBytes) throw tooLarge(path, options, info.size);
}

/**
 * readRegularFile's checks, read at once: for the grader's walk over many small files, where each file's
 * four round trips through the thread pool cost more than grading it. Only a regular file is read (FIFOs and
 * devices refused after an open that does not wait), so the read ends; the caller gives the event loop a
 * turn between files, so Ctrl-C is heard.
 */
export function readRegularFileNow(path: string, options: ReadLimits): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw cannotOpen(path, error);
  }
  try {
    const info = fstatSync(fd);
    checkOpened(path, info, options);
    // To the end, whatever fstat said (a file that grew, or one that reports size 0).
    let bytes: Buffer;
    try {
      bytes = readFileSync(fd);
    } catch (error) {
      throw unreadableFile(path, `cannot read: ${(error as Error).message}`, error);
    }
    if (bytes.length > options.maxBytes) throw tooLarge(path, options);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a regular file's bytes within a size and a time limit (and stops when `signal` aborts).
 * FIFOs, devices and sockets (also behind a symlink) are refused before a byte is read: the open
 * itself does not wait for a writer (O_NONBLOCK).
 */
export async function readRegularFile(
  path: string,
  options: { maxBytes: number; what: string; signal?: AbortSignal },
): Promise<Buffer> {
  const unreadable = (why: string, cause?: unknown) => unreadableFile(path, why, cause);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw cannotOpen(path, error);
  }
  try {
    checkOpened(path, await handle.stat(), options);
    const timeLimit = AbortSignal.timeout(READ_TIME_LIMIT_MS);
    const signal = options.signal ? AbortSignal.any([timeLimit, options.signal]) : timeLimit;
    let bytes: Buffer;
    try {
      bytes = await handle.readFile({ signal });
    } catch (error) {
      if (timeLimit.aborted)
        throw unreadable(`the read took longer than ${READ_TIME_LIMIT_MS / 1000}s: refused`, error);
      if (options.signal?.aborted)
        throw new TermlabError('INTERRUPTED', `${path}: interrupted while reading`, { source: path });
      throw unreadable(`cannot read: ${(error as Error).message}`, error);
    }
    if (bytes.length > options.maxBytes) throw tooLarge(path, options);
    return bytes;
  } finally {
    await handle.close();
  }
}

function firstBadUtf8(bytes: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let low = 0,
    high = bytes.length;
  // The longest prefix that decodes (allowing a cut sequence at its end) ends near the bad byte.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    try {
      decoder.decode(bytes.subarray(0, mid), { stream: true });
      low = mid;
    } catch {
      high = mid - 1;
    }
  }
  return low;
}

/** An observation nests about ten levels; anything far deeper is not one, and would only exhaust the stack. */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in a JSON text, counted outside strings, without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0,
    deepest = 0,
    inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * The deepest nesting of arrays and objects in a parsed JSON value, as jsonDepth counts it in its text,
 * without recursion. Walking the value costs a sixth of scanning its text (an observation's bytes are
 * mostly strings), and V8's JSON.parse is itself iterative: only what reads the value after it recurses,
 * so the value is what is measured. A deep value under a key that comes again is discarded by the parse
 * and not counted: nothing reads it.
 */
export function valueDepth(root: unknown): number {
  if (root === null || typeof root !== 'object') return 0;
  let deepest = 0;
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length) {
    const value = values.pop()!;
    const depth = depths.pop()!;
    if (depth > deepest) deepest = depth;
    if (Array.isArray(value)) {
      for (const child of value)
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
    } else {
      for (const key in value) {
        const child = (value as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return deepest;
}

/** Parses JSON, naming the place of a syntax error by line and column, on one line; refuses what nests deeper than an observation can. */
export function parseJsonText(text: string, source: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const position = Number(/position (\d+)/.exec((error as Error).message)?.[1] ?? NaN);
    const where = Number.isFinite(position)
      ? (() => {
          const before = text.slice(0, position).split('\n');
          return ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
        })()
      : '';
    throw new TermlabError(
      'OBSERVATION_INVALID',
      `${source}: (top level): not JSON${where || ` (${text.trim() ? 'a syntax error' : 'the file is empty'})`}`,
      { source, path: '' },
    );
  }
  const depth = valueDepth(value);
  if (depth > MAX_JSON_DEPTH)
    throw new TermlabError(
      'OBSERVATION_INVALID',
      `${source}: (top level): nested ${depth} levels deep, more than the ${MAX_JSON_DEPTH} an observation can hold`,
      { source, path: '' },
    );
  return value;
}

async function readObservationFile(path: string, signal?: AbortSignal): Promise<ParsedObservation> {
  const text = await readRegularTextFile(path, { maxBytes: MAX_OBSERVATION_BYTES, what: 'an observation', signal });
  return parseObservationFile(parseJsonText(text, path), path);
}

/** Either kind of observation file: a pod scenario's, or a rollout's (told apart by `kind`). */
export type AnyParsedObservation =
  | ({ kind: 'pod' } & ParsedObservation)
  | { kind: 'rollout'; observation: RolloutObservation; fileVersion: number }
  | { kind: 'edge'; observation: EdgeObservation; fileVersion: number };

/** A rollout's or an edge's file: this termlab reads one version of each, then its schema. */
function parseVersioned<S extends z.ZodType>(
  data: unknown,
  source: string,
  what: 'rollout' | 'edge',
  version: number,
  schema: S,
): z.infer<S> {
  const found = (data as { schemaVersion?: unknown }).schemaVersion;
  if (found !== version)
    throw invalid(
      source,
      'schemaVersion',
      `this termlab reads ${what} observations of version ${version}, the file says ${JSON.stringify(found)}`,
    );
  const result = schema.safeParse(data);
  if (!result.success) throw schemaProblem(result.error, source);
  return result.data;
}

function parseAnyObservationFile(data: unknown, source: string): AnyParsedObservation {
  if (isEdgeObservation(data))
    return {
      kind: 'edge',
      observation: parseVersioned(data, source, 'edge', EDGE_SCHEMA_VERSION, EdgeObservationSchema),
      fileVersion: EDGE_SCHEMA_VERSION,
    };
  if (isRolloutObservation(data))
    return {
      kind: 'rollout',
      observation: parseVersioned(data, source, 'rollout', ROLLOUT_SCHEMA_VERSION, RolloutObservationSchema),
      fileVersion: ROLLOUT_SCHEMA_VERSION,
    };
  return { kind: 'pod', ...parseObservationFile(data, source) };
}

export async function readAnyObservationFile(path: string, signal?: AbortSignal): Promise<AnyParsedObservation> {
  return parseAnyObservation(
    await readRegularFile(path, { maxBytes: MAX_OBSERVATION_BYTES, what: 'an observation', signal }),
    path,
  );
}

/** readAnyObservationFile at once (readRegularFileNow): the grader's walk over a folder. */
export function readAnyObservationFileNow(path: string): AnyParsedObservation {
  return parseAnyObservation(
    readRegularFileNow(path, { maxBytes: MAX_OBSERVATION_BYTES, what: 'an observation' }),
    path,
  );
}

/** An observation's bytes as read from a file or an archive's member (within MAX_OBSERVATION_BYTES), checked as any file is. */
export function parseAnyObservation(bytes: Buffer, source: string): AnyParsedObservation {
  return parseAnyObservationFile(parseJsonText(decodeUtf8(bytes, source, 'an observation'), source), source);
}

export async function readObservation(path: string): Promise<Observation> {
  return (await readObservationFile(path)).observation;
}
