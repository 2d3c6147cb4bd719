// bench:grade — generate 10,000 observation files, then regrade them from disk in a fresh process, as
// `termlab grade DIR` does. Targets: at least 2,000 files/s on one core, peak RSS under 200 MB,
// floor_ratio ≥ 0.33; at BENCH_FILES=100000 too, peak RSS under 200 MB.
// read_parse_files_per_s is the floor on the same files in the same process: each file read (readFileSync,
// the fastest way, as the grader reads) and JSON.parse'd, one after another, nothing else; floor_ratio =
// files_per_s / that floor, so the machine's noise mostly cancels. The floors run after the grading, whose
// figure their garbage would skew. Before 2026-12-03 the floor read with fs/promises (4,000 files/s here,
// not 12,000): read_parse_async_files_per_s and floor_ratio_async print it still, to compare with then.
// peak_rss_mb is the grading process's own; generator_peak_rss_mb the process that wrote the files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boundHeapGrowth, gradePaths } from '../harness/grade/files.ts';
import { BASE_SCENARIO, buildObservation } from '../test/support/observations.ts';

const FILES = Number(process.env.BENCH_FILES ?? 10_000);
const peakRssMb = () => (process.resourceUsage().maxRSS / 1024).toFixed(1);

async function measure(dir: string): Promise<void> {
  boundHeapGrowth(); // as the grade command does
  const started = performance.now();
  // As `termlab grade DIR` grades to the terminal: each result shown as it comes, only its summary kept.
  let shown = 0;
  const run = await gradePaths([dir], {
    slim: true,
    onResult: () => {
      shown++;
    },
  });
  const seconds = (performance.now() - started) / 1000;
  if (run.tally.graded !== FILES || shown !== FILES || run.problems.length)
    throw new Error(`graded ${run.tally.graded} of ${FILES}; problems: ${run.problems.slice(0, 3).join('; ')}`);
  const heapAfter = process.memoryUsage().heapUsed;
  const peakGrading = peakRssMb();
  const names = readdirSync(dir).sort();
  const floorStarted = performance.now();
  let parsed = 0;
  for (const name of names) if (JSON.parse(readFileSync(join(dir, name), 'utf8'))) parsed++;
  const floorSeconds = (performance.now() - floorStarted) / 1000;
  const asyncStarted = performance.now();
  let parsedAsync = 0;
  for (const name of names) if (JSON.parse(await readFile(join(dir, name), 'utf8'))) parsedAsync++;
  const asyncFloorSeconds = (performance.now() - asyncStarted) / 1000;
  console.log(`files: ${FILES}`);
  console.log(`files_per_s: ${Math.round(FILES / seconds)}`);
  console.log(`read_parse_files_per_s: ${Math.round(parsed / floorSeconds)}`);
  console.log(`floor_ratio: ${(floorSeconds / seconds).toFixed(3)}`);
  console.log(`read_parse_async_files_per_s: ${Math.round(parsedAsync / asyncFloorSeconds)}`);
  console.log(`floor_ratio_async: ${(asyncFloorSeconds / seconds).toFixed(3)}`);
  console.log(`heap_after_grading_mb: ${(heapAfter / 1024 / 1024).toFixed(1)}`);
  console.log(`peak_rss_mb: ${peakGrading}`);
}

if (process.env.BENCH_GRADE_DIR) {
  await measure(process.env.BENCH_GRADE_DIR);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'termlab-bench-grade-'));
  try {
    for (let i = 0; i < FILES; i++) {
      const scenario = { ...BASE_SCENARIO, name: `s${i % 50}`, terminationGracePeriodSeconds: 5 + (i % 4) * 5 };
      writeFileSync(
        join(dir, `${String(i).padStart(6, '0')}.observation.json`),
        JSON.stringify(buildObservation(scenario, undefined, `uid-${i}`), null, 2),
      );
    }
    console.log(`generator_peak_rss_mb: ${peakRssMb()}`);
    // The grading in a process of its own, as a user's `termlab grade` is: its memory is the grader's alone.
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_GRADE_DIR: dir },
    });
    if (child.status !== 0) throw new Error(`the grading process failed (${child.status ?? child.signal})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
