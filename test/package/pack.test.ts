// The published package: `npm pack` builds the bundle and ships it with what the pods and kubectl read, and
// neither TypeScript nor a compiler; the archive, installed with --omit=dev into an empty directory from the
// local npm cache, runs the lab there, from a read-only mount too.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
/** The whole default lab (its longest scenario's pod lives about 15 s) and its grade, on a busy machine. */
const LAB_BUDGET_MS = 5 * 60_000;
/** The issue's bound on the installed folder (114 MB when the package carried its sources and a compiler). */
const INSTALLED_LIMIT_BYTES = 30 * 1024 * 1024;

const NEEDED = [
  'bin/termlab.js',
  'dist/cli.mjs',
  // What the simulated cluster's containers run, the hook their preStop names, and what kubectl's protobuf needs.
  'dist/lab-server.cjs',
  // What the simulated edge's traefik image runs, and the manifest `termlab sim --edge` applies.
  'dist/sim-edge.cjs',
  'manifests/edge/traefik.yaml',
  // The sim's service proxy's data path: its worker thread's script.
  'dist/service-proxy-worker.cjs',
  'server/lab-hook.sh',
  'cluster/sim/protobuf-types.json',
  'manifests/scenarios.yaml',
  'manifests/lab-pod.yaml',
  'manifests/lab.yaml',
  'package.json',
];
const NOT_SHIPPED = [
  // Nothing in an installed package runs TypeScript, nor builds: the sources and the builder stay in the checkout.
  /\.ts$/,
  /^bin\/cli-bundle\./,
  /^dist\/cli\.inputs\.json$/,
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
  let install = npm(['install', '--omit=dev', '--offline', archive], consumer);
  if (install.status !== 0) {
    const reason = install.stderr.split('\n').find((line) => line.startsWith('npm error')) ?? `exit ${install.status}`;
    installNote = `npm install --offline failed (${reason}); used --prefer-offline`;
    console.warn(installNote);
    install = npm(['install', '--omit=dev', '--prefer-offline', archive], consumer);
  }
  expectOk(install, 'npm install of the packed archive');
}, INSTALL_BUDGET_MS);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The bytes of every file under dir (symbolic links as themselves, not followed), as the installed size. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : lstatSync(path).size;
  }
  return total;
}

/** The packages npm installed, by name (`npm ls --all`: every depth). */
function installedPackages(): string[] {
  const ls = npm(['ls', '--all', '--omit=dev', '--parseable'], consumer);
  expectOk(ls, 'npm ls');
  return ls.stdout
    .trim()
    .split('\n')
    .filter((path) => path.includes('/node_modules/'))
    .map((path) => path.slice(path.lastIndexOf('/node_modules/') + '/node_modules/'.length));
}

/** The read-only mount of the install: `mount --bind` and a read-only remount, which only root may do. */
const ROOT_ONLY = process.getuid?.() === 0 ? false : 'mounting the install read-only (mount --bind) needs root';

describe('the packed termlab', () => {
  it('ships what termlab runs and nothing of the tests, benchmarks or the CI node', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(NEEDED));
    expect(paths.filter((path) => NOT_SHIPPED.some((pattern) => pattern.test(path)))).toEqual([]);
  });

  it('installs under 30 MB, with no compiler: neither esbuild nor tsx among its dependencies', () => {
    const bytes = bytesUnder(join(consumer, 'node_modules'));
    expect(bytes, `${(bytes / 1024 / 1024).toFixed(1)} MB installed`).toBeLessThan(INSTALLED_LIMIT_BYTES);
    const installed = installedPackages();
    expect(installed).toContain('termlab');
    expect(installed.filter((name) => /^(esbuild|tsx|@esbuild\/.*|typescript)$/.test(name))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(consumer, 'node_modules/termlab/package.json'), 'utf8'));
    for (const tool of ['esbuild', 'tsx']) expect(manifest.dependencies ?? {}).not.toHaveProperty(tool);
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
      const run = spawnSync(
        'npx',
        ['--no', 'termlab', 'run', '--sim', '--reveal', '--only', 'short-grace', '--output-dir', out],
        {
          cwd: consumer,
          encoding: 'utf8',
          timeout: RUN_BUDGET_MS,
        },
      );
      if (run.status !== EXIT.ok) throw new Error(`termlab run exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
      expect(run.stdout).toMatch(/short-grace .*matches the model/);
      for (const file of ['report.md', 'report.html', 'junit.xml', 'short-grace.observation.json'])
        expect(existsSync(join(out, file)), file).toBe(true);
      expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('short-grace');
    },
    RUN_BUDGET_MS,
  );

  it(
    'starts the simulated cluster with its edge from there (the shipped dist/sim-edge.cjs, no sources)',
    async () => {
      // The installed bin itself, not npx: Ctrl-C (SIGINT) must reach termlab, which then stops its pods.
      const bin = join(consumer, 'node_modules', '.bin', 'termlab');
      const sim = spawn(bin, ['sim', '--edge', '--kubeconfig-out', join(scratch, 'edge.kc')], {
        cwd: consumer,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      sim.stderr.on('data', (c: Buffer) => {
        err += c;
      });
      const closed = new Promise<number | null>((resolve) => sim.on('close', resolve));
      const ready = await new Promise<boolean>((resolve) => {
        sim.stdout.on('data', (c: Buffer) => {
          out += c;
          if (out.includes('Ctrl-C to stop')) resolve(true);
        });
        void closed.then(() => resolve(false));
      });
      sim.kill('SIGINT');
      await closed;
      if (!ready) throw new Error(`termlab sim --edge ended before it was ready:\n${out}\n${err}`);
      expect(out).toMatch(
        /the edge \(Traefik v3\.7\.13, simulated\): Gateway termlab-edge\/edge, IngressClass traefik, on 127\.0\.0\.1:\d+/,
      );
    },
    RUN_BUDGET_MS,
  );

  it.skipIf(ROOT_ONLY)(
    `mounted read-only, runs the whole default lab on the simulated cluster and grades it (${ROOT_ONLY || 'as root'})`,
    () => {
      const mounted = join(scratch, 'read-only');
      const work = join(scratch, 'work');
      mkdirSync(mounted);
      mkdirSync(work);
      expectOk(spawnSync('mount', ['--bind', consumer, mounted], { encoding: 'utf8' }), 'mount --bind');
      try {
        expectOk(
          spawnSync('mount', ['-o', 'remount,ro,bind', mounted], { encoding: 'utf8' }),
          'mount -o remount,ro,bind',
        );
        // The mount really is read-only: a write into the installed package fails.
        expect(() => writeFileSync(join(mounted, 'node_modules/termlab/probe'), '')).toThrow(/EROFS/);
        const termlab = (args: string[], timeout: number) =>
          spawnSync(process.execPath, [join(mounted, 'node_modules/.bin/termlab'), ...args], {
            cwd: work,
            encoding: 'utf8',
            timeout,
          });
        const run = termlab(['run', '--sim', '--reveal', '--output-dir', 'lab'], LAB_BUDGET_MS);
        if (run.status !== EXIT.ok) throw new Error(`termlab run exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
        expect(run.stderr).toBe('');
        const scenarios = [...termlab(['scenarios'], RUN_BUDGET_MS).stdout.matchAll(/^(\S+) {2}\(/gm)].map((m) => m[1]);
        expect(scenarios.length).toBeGreaterThan(1);
        for (const name of scenarios) expect(run.stdout).toMatch(new RegExp(`^${name} .*matches the model`, 'm'));

        const grade = termlab(['grade', 'lab'], RUN_BUDGET_MS);
        if (grade.status !== EXIT.ok)
          throw new Error(`termlab grade exited ${grade.status}:\n${grade.stdout}\n${grade.stderr}`);
        expect(grade.stdout).toContain(`${scenarios.length} graded, ${scenarios.length} passed every check`);
      } finally {
        spawnSync('umount', [mounted]);
      }
    },
    LAB_BUDGET_MS + RUN_BUDGET_MS,
  );
});
