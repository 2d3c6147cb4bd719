// bench:class — a generated class of 300 packed submissions × 8 observations, graded into a
// gradebook (archives opened, manifests checked, pairs, duplicates, lab scores, CSV written).
// Targets: under 3 s and under 300 MB on one core. read_archives_seconds is the floor on the same
// archives in the same run: each opened (read, unpacked, checked against its manifest) and its
// observations JSON.parse'd, nothing graded; class_floor_ratio = that floor / class_seconds.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gradeClass } from '../harness/class/command.ts';
import { gradebookCsv } from '../harness/class/gradebook.ts';
import { DEFAULT_LAB, readLab } from '../harness/class/lab.ts';
import { writeFileAtomic } from '../lib/files.ts';
import { seal } from '../harness/grade/predictions.ts';
import { packRun } from '../harness/pack/pack.ts';
import { openArchive } from '../harness/pack/unpack.ts';
import { loadScenarios } from '../harness/scenario/load.ts';
import { buildObservation } from '../test/support/observations.ts';

const SUBMISSIONS = Number(process.env.BENCH_SUBMISSIONS ?? 300);
const root = mkdtempSync(join(tmpdir(), 'termlab-bench-class-'));
try {
  const scenarios = await loadScenarios();
  const classDir = join(root, 'submissions');
  mkdirSync(classDir);
  for (let i = 0; i < SUBMISSIONS; i++) {
    const runDir = join(root, 'runs', `student-${i}`);
    mkdirSync(runDir, { recursive: true });
    const predictions = `student: "Student ${i}"\npredictions:\n${scenarios.map((s) => `  ${s.name}: { outcome: cut, exitCode: 137 }`).join('\n')}\n`;
    for (const scenario of scenarios) {
      const o = buildObservation(scenario, undefined, `uid-${i}-${scenario.name}`);
      o.run.runId = `run-20261130-${String(i).padStart(4, '0')}`;
      // As `termlab run --predictions` seals them: a hand-in without is flagged for review.
      o.run.predictions = seal(predictions);
      writeFileSync(join(runDir, `${scenario.name}.observation.json`), JSON.stringify(o, null, 2));
    }
    writeFileSync(join(runDir, 'predictions.yaml'), predictions);
    await packRun(runDir, { out: join(classDir, `student-${i}.tar.gz`) });
  }
  const lab = await readLab(DEFAULT_LAB);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const { book } = await gradeClass([classDir], lab);
  await writeFileAtomic(join(root, 'gradebook.csv'), gradebookCsv(book));
  const seconds = (performance.now() - started) / 1000;
  // CPU time of this process alone: on a shared, loaded machine the wall time also holds others' work.
  const cpu = process.cpuUsage(cpuBefore);
  // The floor after the grading: run first, its garbage slowed the grading by a second (4.1 s, not 3.0 s).
  const floorStarted = performance.now();
  let members = 0;
  for (const name of readdirSync(classDir).sort()) {
    for (const [member, data] of (await openArchive(join(classDir, name))).files)
      if (member.endsWith('.observation.json') && JSON.parse(data.toString('utf8'))) members++;
  }
  const floorSeconds = (performance.now() - floorStarted) / 1000;
  const graded = book.rows.reduce((sum, r) => sum + r.scenariosGraded, 0);
  if (
    members !== SUBMISSIONS * scenarios.length ||
    book.rows.length !== SUBMISSIONS ||
    graded !== SUBMISSIONS * scenarios.length ||
    book.rows.some((r) => r.review.length)
  ) {
    throw new Error(
      `expected ${SUBMISSIONS} clean rows of ${scenarios.length}; got ${book.rows.length} rows, ${graded} graded, ${book.rows.filter((r) => r.review.length).length} to review`,
    );
  }
  console.log(`submissions: ${SUBMISSIONS}`);
  console.log(`observations: ${graded}`);
  console.log(`class_seconds: ${seconds.toFixed(2)}`);
  console.log(`class_cpu_seconds: ${((cpu.user + cpu.system) / 1e6).toFixed(2)}`);
  console.log(`read_archives_seconds: ${floorSeconds.toFixed(2)}`);
  console.log(`class_floor_ratio: ${(floorSeconds / seconds).toFixed(3)}`);
  console.log(`peak_rss_mb: ${(process.resourceUsage().maxRSS / 1024).toFixed(1)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
