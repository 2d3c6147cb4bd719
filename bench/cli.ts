// bench:cli — the CPU (user + system, as /usr/bin/time counts it) of one spawn of bin/termlab.js, from its
// bundle (dist/cli.mjs) and from its TypeScript sources (TERMLAB_BUNDLE=0: how every spawn ran before the
// bundle, and how one runs when the bundle cannot be built). The median of RUNS spawns each. It measures a
// spawn whole, start-up and work, with the processes it waited for (a --sim run's containers and hooks);
// not its wall time, which on a shared machine says more about the neighbours.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshBundle } from '../bin/cli-bundle.js';
import { repoRoot } from '../test/support/processes.ts';
import { percentile } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const scratch = mkdtempSync(join(tmpdir(), 'termlab-bench-cli-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const COMMANDS: Record<string, () => string[]> = {
  run_help: () => ['run', '--help'],
  grade_fixture: () => ['grade', 'reports/examples/completed-0.observation.json'],
  run_sim_one: () => [
    'run',
    '--sim',
    '--only',
    'immediate-exit',
    '--owner',
    'bench',
    '--output-dir',
    mkdtempSync(join(scratch, 'run-')),
  ],
};

/** One spawn's user + system CPU seconds. */
function cpuSeconds(args: string[], fromSources: boolean): number {
  const times = join(scratch, 'time');
  const env = { ...process.env, TERMLAB_BUNDLE: fromSources ? '0' : '1', TERMLAB_STATE_DIR: join(scratch, 'state') };
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', times, process.execPath, 'bin/termlab.js', ...args], {
    cwd: repoRoot,
    env,
    encoding: 'utf8',
  });
  if (r.error) throw new Error(`/usr/bin/time: ${r.error.message}`);
  // grade exits 1 on a failing example; only a crash is an error here.
  if (r.status !== 0 && r.status !== 1) throw new Error(`termlab ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  const [user, system] = readFileSync(times, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return user! + system!;
}

await freshBundle();
console.log(`node: ${execFileSync(process.execPath, ['--version'], { encoding: 'utf8' }).trim()}`);
console.log(`runs_each: ${RUNS}`);
for (const [name, args] of Object.entries(COMMANDS)) {
  const figures: Record<string, number> = {};
  for (const from of ['bundle', 'sources'] as const) {
    figures[from] = percentile(
      Array.from({ length: RUNS }, () => cpuSeconds(args(), from === 'sources')),
      0.5,
    );
    console.log(`${name}_cpu_s_${from}: ${figures[from].toFixed(2)}`);
  }
  console.log(`${name}_cpu_ratio: ${(figures.bundle! / figures.sources!).toFixed(2)}`);
}
