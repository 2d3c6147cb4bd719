// Generic file helpers any layer may use (harness, cluster/sim, dev/node): whole-or-nothing
// writes, and reading a JSON file through a zod schema with one line naming the file and field.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { issueText } from './issues.ts';
import { oneLine } from './terminal.ts';

/** Pieces are joined into writes of about this much: a file of hundreds of MiB never becomes one string. */
const WRITE_CHUNK_CHARS = 1 << 22;

/**
 * Writes a file whole or not at all: a temporary file beside it, then a rename; a failed write leaves
 * neither. `text` may come in pieces (a large file, written in chunks). `mode` is the file's mode from
 * its creation on (a private file is never wider, not even for a moment). Returns the bytes written.
 */
export async function writeFileAtomic(path: string, text: string | readonly string[], mode?: number): Promise<number> {
  const pieces = typeof text === 'string' ? [text] : text;
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', mode);
  let bytes = 0;
  try {
    for (let at = 0; at < pieces.length; ) {
      let chunk = '';
      while (at < pieces.length && chunk.length < WRITE_CHUNK_CHARS) chunk += pieces[at++];
      const buffer = Buffer.from(chunk);
      // A write may take only part of a buffer: the rest is written after it.
      for (let done = 0; done < buffer.length; )
        done += (await handle.write(buffer, done, buffer.length - done)).bytesWritten;
      bytes += buffer.length;
    }
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  return bytes;
}

const errno = (code: string, syscall: string, path: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

/**
 * `mkdir -p` that always ends: the missing folders are found walking up, then made top down, each once; the first
 * failure is the answer. Node's `mkdir(path, { recursive: true })` is not used: where a parent exists but a child in
 * it answers ENOENT (anything under /proc, a dangling symlink) it retries the parent and the child forever, on a
 * thread no signal reaches, and its promise never settles. `mode` is each new folder's mode.
 */
export async function makeDirectory(path: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    const found = await stat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (found) {
      if (!found.isDirectory()) throw errno('ENOTDIR', 'mkdir', at);
      break;
    }
    if (dirname(at) === at) break;
    missing.push(at);
  }
  for (const folder of missing.reverse()) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      // Made meanwhile by someone else is as good as made here.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await stat(folder).catch(() => null))?.isDirectory())
        continue;
      throw error;
    }
  }
}

export type JsonFileResult<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Reads a JSON file and parses it with `schema`. A missing, unreadable or invalid file is a
 * result with one line naming the file (and the field), never a throw: the caller decides.
 */
export async function readJsonFile<S extends z.ZodType>(path: string, schema: S): Promise<JsonFileResult<z.infer<S>>> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    return { ok: false, problem: `${path}: ${(error as Error).message.split('\n')[0]}` };
  }
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, problem: `${path}: ${formatIssue(parsed.error.issues[0]!)}` };
}

/** A zod issue as the contract tells it (where, then what), on one line with control characters escaped. */
export function formatIssue(issue: z.core.$ZodIssue, whole = '(top level)'): string {
  return oneLine(issueText(issue, whole));
}
