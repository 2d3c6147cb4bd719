// One way to run a process in a container, shared by exec hooks (kill.ts) and `kubectl exec`
// (remotecommand.ts): the command resolved through the image map, run in the container's working
// directory with the container's environment (its address, HOST, included).
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { accessSync, constants as fs } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../lib/package-root.ts';
import type { ImageEntry } from './runtime.ts';

/** What a process started in a container shares with it. */
export interface ContainerContext {
  image: ImageEntry;
  env: Record<string, string>;
}

/** The runtime's answer when the command is not in the image (as runc words it). */
class ExecutableNotFound extends Error {
  constructor(command: string) {
    super(`exec: ${JSON.stringify(command)}: executable file not found in $PATH`);
  }
}

const isExecutable = (path: string) => {
  try {
    accessSync(path, fs.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The local argv for a command named inside the image: the image map first; otherwise the host's
 * own tools stand in for the image's (the lab image is Alpine with busybox: sh, ls, cat, wget...),
 * looked up on the container's PATH.
 */
function resolveCommand(image: ImageEntry, env: Record<string, string>, command: string[]): string[] {
  const [name, ...args] = command;
  if (name === undefined || name === '') throw new ExecutableNotFound('');
  const mapped = image.paths[name];
  if (mapped) return [...mapped, ...args];
  if (name.includes('/')) {
    if (isExecutable(name)) return [name, ...args];
    throw new ExecutableNotFound(name);
  }
  const found = (env.PATH ?? '')
    .split(':')
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find(isExecutable);
  if (!found) throw new ExecutableNotFound(name);
  return [found, ...args];
}

const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

export interface SpawnInContainerOptions {
  stdio: StdioOptions;
  /** Added to (and overriding) the container's environment. */
  env?: Record<string, string>;
  /** Run under a pseudo-terminal (`script` allocates one), as the runtime does for `exec -t`. */
  tty?: boolean;
  /** The terminal's size from the start, as the runtime sets it before the command runs. */
  terminalSize?: { width: number; height: number } | null;
  /** Its own process group, so everything it starts can be stopped with it. */
  detached?: boolean;
}

/** Starts `command` in the container. Throws ExecutableNotFound before starting anything. */
export function spawnInContainer(
  container: ContainerContext,
  command: string[],
  options: SpawnInContainerOptions,
): ChildProcess {
  const env = { ...container.env, ...options.env };
  const argv = resolveCommand(container.image, env, command);
  const spawnOptions = { cwd: PACKAGE_ROOT, env, stdio: options.stdio, detached: options.detached ?? false };
  if (!options.tty) return spawn(argv[0]!, argv.slice(1), spawnOptions);
  // util-linux script: -q quiet, -f flush each write, -e return the command's exit code.
  const size = options.terminalSize
    ? `stty rows ${options.terminalSize.height} cols ${options.terminalSize.width}; `
    : '';
  return spawn('script', ['-qfec', `${size}exec ${argv.map(shellQuote).join(' ')}`, '/dev/null'], {
    ...spawnOptions,
    env: { TERM: 'xterm', ...env },
  });
}
