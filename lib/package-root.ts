// termlab's own folder (where its package.json is), found from this module's place by walking up: the same
// answer whether the code runs from its sources (harness/) or bundled (dist/cli.mjs and dist/chunks/), where
// every module's import.meta.url is its chunk's. Repo-relative paths go through packagePath, never a URL.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const PackageJsonSchema = z.object({ name: z.string(), version: z.string() });

function findPackage(from: string): { root: string; version: string } {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed = PackageJsonSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success && parsed.data.name === 'termlab') return { root: dir, version: parsed.data.version };
    }
    if (dirname(dir) === dir) throw new Error(`no package.json of termlab in ${from} or any folder above it`);
  }
}

const found = findPackage(dirname(fileURLToPath(import.meta.url)));

export const PACKAGE_ROOT: string = found.root;
export const PACKAGE_VERSION: string = found.version;

/** A file of the package, by its path from the package's root (`manifests/lab.yaml`). */
export const packagePath = (relative: string): string => join(PACKAGE_ROOT, relative);
