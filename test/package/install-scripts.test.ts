// npm 11.16 on warns at the end of `npm install` about every dependency whose install script package.json's
// `allowScripts` does not cover (npm 12 blocks them). Each one the lockfile marks is decided there: none is left to warn.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';

const json = (path: string) => JSON.parse(readFileSync(join(repoRoot, path), 'utf8'));

describe('install scripts', () => {
  it("package.json's allowScripts decides every package of the lockfile that has an install script", () => {
    const lock = json('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(withScripts).toContain('esbuild');
    const allowed = (json('package.json') as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    const decided = new Set(Object.keys(allowed).map((k) => k.replace(/(.)@.*$/, '$1')));
    expect(withScripts.filter((name) => !decided.has(name))).toEqual([]);
  });
});
