// The published package: `npm pack` ships only what termlab needs, and the archive, installed into
// an empty directory from the local npm cache, runs the lab there.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Packing and installing about a hundred packages from the cache is a build step, not a check of speed. */
const INSTALL_BUDGET_MS = 5 * 60_000;
/** The simulated run of one scenario: its pod's whole life plus start-up, on a busy machine. */
const RUN_BUDGET_MS = 2 * 60_000;

const NEEDED = [
  'bin/termlab.js',
  'dist/cli.mjs',
  'harness/cli/main.ts',
  'cluster/sim/index.ts',
  'server/main.ts',
  'server/lab-hook.sh',
  'manifests/scenarios.yaml',
  'manifests/lab-pod.yaml',
  'package.json',
];
const NOT_SHIPPED = [
  /^test\//,
  /^bench\//,
  /^cluster\/node\//,
  /\.go$/,
  /(^|\/)go\.(mod|sum)$/,
  /^reports\//,
  /^\.ci\//,
  /^\.github\//,
  /^docs\//,
];

const scratch = mkdtempSync(join(tmpdir(), 'termlab-pack-'));
const consumer = join(scratch, 'consumer');
let packed: { filename: string; files: { path: string }[] };
let installNote = '';

function npm(args: string[], cwd: string, timeout = INSTALL_BUDGET_MS): SpawnSyncReturns<string> {
  return spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });
}

function expectOk(result: SpawnSyncReturns<string>, what: string): void {
  if (result.status !== 0)
    throw new Error(
      `${what} exited ${result.status}${result.signal ? ` (${result.signal})` : ''}:\n${result.stdout}\n${result.stderr}`,
    );
}

beforeAll(() => {
  const pack = npm(['pack', '--json', '--pack-destination', scratch], REPO);
  expectOk(pack, 'npm pack');
  packed = JSON.parse(pack.stdout)[0];
  const archive = join(scratch, packed.filename);
  spawnSync('mkdir', [consumer]);
  // From the local cache alone when it holds every dependency; else let npm fill the gaps.
  let install = npm(['install', '--offline', archive], consumer);
  if (install.status !== 0) {
    const reason = install.stderr.split('\n').find((line) => line.startsWith('npm error')) ?? `exit ${install.status}`;
    installNote = `npm install --offline failed (${reason}); used --prefer-offline`;
    console.warn(installNote);
    install = npm(['install', '--prefer-offline', archive], consumer);
  }
  expectOk(install, 'npm install of the packed archive');
}, INSTALL_BUDGET_MS);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packed termlab', () => {
  it('ships what termlab runs and nothing of the tests, benchmarks or the CI node', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(NEEDED));
    expect(paths.filter((path) => NOT_SHIPPED.some((pattern) => pattern.test(path)))).toEqual([]);
  });

  it('installs into an empty directory and lists its scenarios', () => {
    expect(existsSync(join(consumer, 'node_modules/termlab/bin/termlab.js'))).toBe(true);
    const scenarios = spawnSync('npx', ['--no', 'termlab', 'scenarios'], { cwd: consumer, encoding: 'utf8' });
    expect(scenarios.stderr).toBe('');
    expect(scenarios.status).toBe(EXIT.ok);
    expect(scenarios.stdout).toMatch(/^short-grace /m);
  });

  it(
    'runs a scenario on the simulated cluster from there',
    () => {
      const out = join(consumer, 'run');
      const run = spawnSync('npx', ['--no', 'termlab', 'run', '--sim', '--only', 'short-grace', '--out', out], {
        cwd: consumer,
        encoding: 'utf8',
        timeout: RUN_BUDGET_MS,
      });
      if (run.status !== EXIT.ok) throw new Error(`termlab run exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
      expect(run.stdout).toMatch(/short-grace .*matches the model/);
      for (const file of ['report.md', 'report.html', 'junit.xml', 'short-grace.observation.json'])
        expect(existsSync(join(out, file)), file).toBe(true);
      expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('short-grace');
    },
    RUN_BUDGET_MS,
  );
});
