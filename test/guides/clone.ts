// A fresh clone of this checkout, as a newcomer gets one, and the folder copies the test follows a hint or an
// alternative in without disturbing the path it is on.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function git(args: string[], cwd?: string): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * `git clone` of `root` into `dir`, with the checkout's uncommitted changes laid over it (the docs or code being
 * edited are what is followed, not the last commit's). node_modules is linked to the checkout's own instead of
 * `npm install`ed: the same packages, without minutes of install on every run of the test.
 */
export function freshClone(root: string, dir: string): string {
  git(['clone', '--quiet', root, dir]);
  const changed =
    git(['diff', '-z', '--name-only', 'HEAD'], root) + git(['ls-files', '-z', '--others', '--exclude-standard'], root);
  for (const file of changed.split('\0')) {
    if (!file) continue;
    const to = join(dir, file);
    if (existsSync(join(root, file))) {
      mkdirSync(dirname(to), { recursive: true });
      cpSync(join(root, file), to);
    } else rmSync(to, { force: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/**
 * A copy of a student's folder as it is now (its git history left out: nothing the lab reads). Times kept: a
 * bundle that looked older than its sources would be built again (bin/cli-bundle.js), seconds per copy.
 */
export function copyOf(dir: string, to: string): string {
  cpSync(dir, to, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    filter: (src) => src !== join(dir, '.git'),
  });
  return to;
}

/**
 * An `npm` first on the PATH that stands in for `npm install` in a clone whose node_modules is linked: it runs
 * what install runs for the project itself, its prepare script; everything else goes to the real npm.
 */
export function npmShim(binDir: string): string {
  const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!npm) throw new Error('npm is not on the PATH');
  mkdirSync(binDir, { recursive: true });
  writeFileSync(
    join(binDir, 'npm'),
    `#!/bin/sh\nif [ "$*" = install ]; then exec "${npm}" run -s prepare; fi\nexec "${npm}" "$@"\n`,
    { mode: 0o755 },
  );
  return binDir;
}
