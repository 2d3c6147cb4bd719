// The one walk over the folders `termlab grade` is given: it ends on any tree of links. A link to a
// folder is never followed (as before), so no loop can hold it; an entry that can never be read (a link
// loop, a link back to a folder above it, a folder named like a file it looks for) is named, one line each.
import type { Dirent, Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { TermlabError } from '../../lib/errors.ts';
import { oneLine } from '../../lib/terminal.ts';

/** A file to read, or an entry that gives nothing to read and why. */
export interface Walked {
  path: string;
  problem?: string;
}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Files named on the command line are taken as they are; folders give the files under them whose names `wanted` takes. */
export async function* walkPaths(paths: string[], wanted: (name: string) => boolean): AsyncGenerator<Walked> {
  for (const path of paths) {
    let info: Stats;
    try {
      info = await stat(path);
    } catch (error) {
      throw new TermlabError(
        'INPUT_UNREADABLE',
        `${path}: ${errno(error) === 'ENOENT' ? 'no such file or directory' : errno(error) === 'ELOOP' ? 'a symbolic link loop' : oneLine((error as Error).message)}`,
        { source: path, missing: errno(error) === 'ENOENT' },
      );
    }
    // Anything but a folder is opened as a file, which refuses FIFOs, devices and sockets.
    if (info.isDirectory()) yield* walkFolder(path, await realpath(path), wanted);
    else yield { path };
  }
}

/** A folder that holds `real` (its own real path, or one above it): a way back into it is a loop. */
const holds = (folder: string, real: string) =>
  real === folder || real.startsWith(folder.endsWith(sep) ? folder : folder + sep);

async function* walkFolder(folder: string, real: string, wanted: (name: string) => boolean): AsyncGenerator<Walked> {
  let entries: Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    throw new TermlabError('INPUT_UNREADABLE', `${folder}: cannot list: ${oneLine((error as Error).message)}`, {
      source: folder,
    });
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const child = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (wanted(entry.name)) yield { path: child, problem: 'a folder, not a file: nothing to read' };
      else {
        const inner = await realpath(child).catch(() => null);
        // A bind mount can bring a folder back under itself too.
        if (inner !== null && !holds(inner, real)) yield* walkFolder(child, inner, wanted);
      }
      continue;
    }
    if (entry.isSymbolicLink()) {
      const problem = await linkProblem(child, real);
      if (problem) yield { path: child, problem };
      else if (wanted(entry.name)) yield { path: child };
      continue;
    }
    if (wanted(entry.name)) yield { path: child };
  }
}

/** Why a link gives nothing to read (a loop, a folder), or null: a file behind it, or nothing at all (the reader says so). */
async function linkProblem(link: string, folder: string): Promise<string | null> {
  let info: Stats;
  try {
    info = await stat(link);
  } catch (error) {
    return errno(error) === 'ELOOP' ? 'a symbolic link loop: nothing to read' : null;
  }
  if (!info.isDirectory()) return null;
  const target = await realpath(link).catch(() => null);
  if (target !== null && holds(target, folder))
    return `a symbolic link back to ${oneLine(target)}, a folder it is in (a loop): not followed`;
  return null;
}
