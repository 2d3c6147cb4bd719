// `npm run check:model [-- --small] [--parallel N]`: the model against the simulator on a grid
// (./grid.ts). Runs every combination with `termlab run --sim`, many at a time, grades each
// observation, lists every disagreement with its scenario, and exits 1 on any. Figures as
// `name: value` lines.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { gradeFile } from '../../harness/grade/files.ts';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool, wholeNumber } from '../entry.ts';
import type { GradeResult } from '../../harness/grade/types.ts';
import { FULL_GRID, type GridAxes, type GridSummary, gridScenarios, SMALL_GRID, summarize } from './grid.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface CheckModelResult extends GridSummary {
  seconds: number;
  /** What `termlab run` printed on stderr (problems, scenario failures). */
  runStderr: string;
  runExitCode: number | null;
}

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO, 'bin/termlab.js'), ...args], {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Stopped as a Ctrl-C stops it (its pods deleted), also when the signal reached this process alone.
    const stop = () => child.kill('SIGINT');
    signal?.addEventListener('abort', stop, { once: true });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('close', (code) => {
      signal?.removeEventListener('abort', stop);
      resolve({ code, stderr });
    });
  });
}

export async function checkModel(
  axes: GridAxes,
  options: { parallel: number; signal?: AbortSignal },
): Promise<CheckModelResult> {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'termlab-check-model-'));
  try {
    const scenarios = gridScenarios(axes);
    const file = join(dir, 'grid.yaml');
    writeFileSync(file, stringify({ scenarios }));
    const out = join(dir, 'run');
    const parallel = String(options.parallel);
    const run = await runCli(
      [
        'run',
        '--sim',
        '--scenarios',
        file,
        '--parallel',
        parallel,
        '--max-pods',
        parallel,
        '--output-dir',
        out,
        '--owner',
        'check-model',
      ],
      { TERMLAB_STATE_DIR: join(dir, 'state') },
      options.signal,
    );
    options.signal?.throwIfAborted();
    const results: GradeResult[] = [];
    for (const name of readdirSync(out).filter((f) => f.endsWith('.observation.json')))
      results.push(await gradeFile(join(out, name)));
    return {
      ...summarize(scenarios, results),
      seconds: (performance.now() - began) / 1000,
      runStderr: run.stderr,
      runExitCode: run.code,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures as a Markdown table, for the note that closes a check:model run. */
export function closingTable(r: CheckModelResult): string {
  const disagreements = r.disagreements.length + r.missing.length;
  const share = r.combinations ? ` (${((100 * r.inconclusive.length) / r.combinations).toFixed(1)} %)` : '';
  return (
    [
      '| combinations | agreements | disagreements | too close to call | seconds |',
      '| ---: | ---: | ---: | ---: | ---: |',
      `| ${r.combinations} | ${r.agreements} | ${disagreements} | ${r.inconclusive.length}${share} | ${r.seconds.toFixed(1)} |`,
    ].join('\n') + '\n'
  );
}

const tool = {
  name: 'check:model',
  usage: 'npm run check:model -- [--small] [--parallel N]',
  // `termlab run` is stopped as a Ctrl-C stops it, then the grid's folder is removed.
  interrupt: 'abort',
} as const;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runDevTool(tool, async (signal) => {
    const { values } = devArgs(tool, { small: { type: 'boolean' }, parallel: { type: 'string', default: '12' } });
    const parallel = wholeNumber('--parallel', values.parallel, 1);
    const r = await checkModel(values.small ? SMALL_GRID : FULL_GRID, { parallel, signal });
    for (const d of r.disagreements) process.stdout.write(`disagreement: ${d.scenario}: ${d.verdict}: ${d.why}\n`);
    for (const m of r.missing) process.stdout.write(`disagreement: ${m}: no observation was recorded\n`);
    for (const i of r.inconclusive) process.stdout.write(`inconclusive: ${i.scenario}: ${i.why}\n`);
    if (r.runStderr.trim()) process.stdout.write(`termlab run said:\n${r.runStderr}`);
    process.stdout.write(`check_model_combinations: ${r.combinations}\n`);
    process.stdout.write(`check_model_agreements: ${r.agreements}\n`);
    process.stdout.write(`check_model_disagreements: ${r.disagreements.length + r.missing.length}\n`);
    process.stdout.write(`check_model_inconclusive: ${r.inconclusive.length}\n`);
    process.stdout.write(`check_model_seconds: ${r.seconds.toFixed(1)}\n`);
    process.stdout.write(closingTable(r));
    const disagreements = r.disagreements.length + r.missing.length;
    if (disagreements)
      throw new TermlabError(
        'CHECKS_FAILED',
        `${disagreements} of ${r.combinations} combinations: the model and the simulated cluster disagree`,
      );
  });
}
