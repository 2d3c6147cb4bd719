// The CLI's bundle (bin/cli-bundle.js) in copies of the package, never the repo's own: built when missing,
// used while up to date, built again after a source changes (the lab server's too), the sources run (saying
// why, once) when it cannot be built; a copy without sources (as installed) runs it as it is and builds
// nothing; and a fresh clone's `npm ci` (and the GitHub Action's install step) builds it, so that its `npm start`
// (and the Action's verify step) uses it as it is.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { repoRoot } from '../support/processes.ts';

/** `npm ci` from the local cache is an install, not a check of speed. */
const INSTALL_BUDGET_MS = 5 * 60_000;
const PACKAGE_FILES = [
  'bin',
  'lib',
  'harness',
  'cluster/sim',
  'server',
  'manifests',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

const scratch = mkdtempSync(join(tmpdir(), 'termlab-bundle-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the package's files (no dist/), with node_modules linked or left for npm to install. */
function copyOfPackage(name: string, linkModules: boolean): string {
  const dir = join(scratch, name);
  for (const path of PACKAGE_FILES) cpSync(join(repoRoot, path), join(dir, path), { recursive: true });
  if (linkModules) symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** NODE_DEBUG=termlab: the bundle says on stderr which file runs and why it was built. */
function termlab(dir: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(dir, 'bin/termlab.js'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NODE_DEBUG: 'termlab' },
  });
}

describe('the bundled CLI', () => {
  it('is built when missing, used while up to date, and built again after a source changes', () => {
    const dir = copyOfPackage('edited', true);
    const bundle = join(dir, 'dist/cli.mjs');
    const first = termlab(dir, ['--version']);
    expect(first.stderr).toMatch(new RegExp(`TERMLAB \\d+: building ${bundle}: ${bundle} is not built yet\n`));
    expect(first.stdout).toBe('0.1.0\n');
    const second = termlab(dir, ['--version']);
    expect(second.stderr).toMatch(new RegExp(`TERMLAB \\d+: running ${bundle}, up to date\n`));
    expect(second.stderr).not.toContain('building');

    const source = join(dir, 'lib/version.ts');
    writeFileSync(source, readFileSync(source, 'utf8').replace('= PACKAGE_VERSION;', "= PACKAGE_VERSION + '-edited';"));
    const edited = termlab(dir, ['--version']);
    expect(edited.stderr).toMatch(new RegExp(`TERMLAB \\d+: building ${bundle}: lib/version.ts changed\n`));
    expect(edited.stdout).toBe('0.1.0-edited\n');
    // The edit is in one of the bundle's files: the entry, or a chunk of it.
    const files = [bundle, ...readdirSync(join(dir, 'dist/chunks')).map((name) => join(dir, 'dist/chunks', name))];
    expect(files.filter((file) => readFileSync(file, 'utf8').includes('-edited'))).toHaveLength(1);
    expect(termlab(dir, ['--version']).stderr).toContain('up to date');

    // A chunk gone (a folder cleaned by hand) is a bundle to build again, never an import that fails.
    rmSync(join(dir, 'dist/chunks'), { recursive: true });
    const rebuilt = termlab(dir, ['--version']);
    expect(rebuilt.stderr).toMatch(new RegExp(`TERMLAB \\d+: building ${bundle}: dist/chunks/\\S+\\.mjs is gone\n`));
    expect(rebuilt.stdout).toBe('0.1.0-edited\n');
  });

  it('builds the lab server beside it, and again after one of its sources changes', () => {
    const dir = copyOfPackage('lab-server', true);
    const server = join(dir, 'dist/lab-server.cjs');
    expect(termlab(dir, ['--version']).stderr).toContain('is not built yet');
    // The server as the simulated cluster's containers run it in an installed package: plain node, one file.
    const badMode = (file: string) =>
      spawnSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, LAB_MODE: 'bogus' } });
    const before = badMode(server);
    expect(before.status).toBe(LAB_EXIT_CODES.config);
    expect(before.stderr).toMatch(/^lab-server: LAB_MODE/);

    const source = join(dir, 'server/main.ts');
    writeFileSync(source, readFileSync(source, 'utf8').replace('`lab-server: ', '`lab-server (edited): '));
    expect(termlab(dir, ['--version']).stderr).toMatch(
      new RegExp(`TERMLAB \\d+: building ${join(dir, 'dist/cli.mjs')}: server/main.ts changed\n`),
    );
    const after = badMode(server);
    expect(after.status).toBe(LAB_EXIT_CODES.config);
    expect(after.stderr).toMatch(/^lab-server \(edited\): LAB_MODE/);
  });

  it('runs the bundle as shipped, building nothing, in a copy without sources and without esbuild (as installed)', () => {
    const dir = copyOfPackage('installed', true);
    expect(termlab(dir, ['--version']).stderr).toContain('is not built yet');
    // What npm pack leaves out: the sources, the builder, the build's record; and no node_modules (no esbuild).
    unlinkSync(join(dir, 'node_modules'));
    for (const path of ['harness', 'lib', 'bin/cli-bundle.js', 'dist/cli.inputs.json'])
      rmSync(join(dir, path), { recursive: true });
    for (const name of readdirSync(join(dir, 'server'))) if (name.endsWith('.ts')) rmSync(join(dir, 'server', name));
    const bundle = join(dir, 'dist/cli.mjs');
    const built = readFileSync(bundle);
    const r = termlab(dir, ['scenarios']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^short-grace /m);
    expect(readFileSync(bundle).equals(built)).toBe(true);
  });

  it('runs from the sources when the bundle cannot be built, and says why in one line', () => {
    const dir = copyOfPackage('unbuildable', true);
    writeFileSync(join(dir, 'dist'), "a file where the bundle's folder belongs\n");
    const r = spawnSync(process.execPath, [join(dir, 'bin/termlab.js'), 'scenarios'], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^termlab: running from the TypeScript sources \(slower\): the bundle could not be built: .*dist/,
      ),
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^short-grace /m);
  });

  it(
    "is built by a fresh clone's npm ci, and its npm start then runs it as built",
    () => {
      const dir = copyOfPackage('fresh-clone', false);
      const install = spawnSync('npm', ['ci', '--offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: INSTALL_BUDGET_MS,
      });
      if (install.status !== 0)
        throw new Error(`npm ci exited ${install.status}:\n${install.stdout}\n${install.stderr}`);
      expect(existsSync(join(dir, 'dist/cli.mjs'))).toBe(true);
      // npm start is `termlab run --sim`: its --help runs the same entry and bundle, without the matrix.
      const start = spawnSync('npm', ['start', '--silent', '--', '--help'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NODE_DEBUG: 'termlab' },
      });
      expect(start.status).toBe(0);
      expect(start.stdout).toContain('--sim');
      expect(start.stderr).toMatch(new RegExp(`^TERMLAB \\d+: running ${join(dir, 'dist/cli.mjs')}, up to date\n$`));
    },
    INSTALL_BUDGET_MS,
  );

  it(
    "is built by action.yml's install step in the action's checkout, and its verify step's program runs it as built",
    () => {
      const dir = copyOfPackage('action', false);
      const install = parse(readFileSync(join(repoRoot, 'action.yml'), 'utf8')).runs.steps.find(
        (step: { name?: string }) => step.name === 'Install termlab',
      );
      const r = spawnSync('bash', ['-c', install.run], {
        cwd: scratch,
        encoding: 'utf8',
        timeout: INSTALL_BUDGET_MS,
        env: { ...process.env, GITHUB_ACTION_PATH: dir, npm_config_offline: 'true' },
      });
      if (r.status !== 0) throw new Error(`the install step exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
      const version = termlab(dir, ['--version']);
      expect(version.stdout).toBe('0.1.0\n');
      expect(version.stderr).toMatch(new RegExp(`^TERMLAB \\d+: running ${join(dir, 'dist/cli.mjs')}, up to date\n$`));
    },
    INSTALL_BUDGET_MS,
  );
});
