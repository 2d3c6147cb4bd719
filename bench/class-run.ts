// bench:class-run — a class on one cluster: N students at once, each its own `termlab run --lab`
// of the lab pair, on one simulated cluster (or on --kubeconfig's cluster, one kubeconfig per
// student from --student-kubeconfigs DIR, as `termlab class student` writes them).
// Prints: students, runs exited 0, pairs passed, verdicts by kind, wrong verdicts, pods left, wall.
// Every verdict must be right (both halves match the model, the pair passes) and no pod left.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { startSimCluster } from '../cluster/sim/index.ts';
import { gradePaths } from '../harness/grade/files.ts';
import { repoRoot } from '../test/support/processes.ts';

const { values } = parseArgs({
  options: {
    students: { type: 'string', default: '40' },
    kubeconfig: { type: 'string' },
    'student-kubeconfigs': { type: 'string' },
    namespace: { type: 'string' },
  },
});
const students = Number(values.students);
const root = mkdtempSync(join(tmpdir(), 'termlab-class-run-'));
const sim = values.kubeconfig ? null : await startSimCluster();
const sharedKubeconfig = values.kubeconfig ?? join(root, 'sim.kubeconfig');
if (sim) writeFileSync(sharedKubeconfig, sim.kubeconfig, { mode: 0o600 });
const studentDir = values['student-kubeconfigs'];
const studentKubeconfigs = studentDir
  ? readdirSync(studentDir)
      .filter((f) => f.endsWith('.kubeconfig'))
      .sort()
      .map((f) => join(studentDir, f))
  : [];
if (studentDir && !studentKubeconfigs.length)
  throw new Error(
    `--student-kubeconfigs ${studentDir}: no *.kubeconfig files in it (termlab class student writes them)`,
  );
const kubeconfigOf = (i: number) =>
  studentKubeconfigs.length ? studentKubeconfigs[i % studentKubeconfigs.length]! : sharedKubeconfig;

function runStudent(i: number): Promise<{ i: number; code: number | null; out: string; dir: string; seconds: number }> {
  const dir = join(root, `student-${i}`);
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const args = [
    join(repoRoot, 'bin', 'termlab.js'),
    'run',
    '--kubeconfig',
    kubeconfigOf(i),
    '--lab',
    join(repoRoot, 'manifests', 'lab.yaml'),
    '--only',
    'short-grace,restored-grace',
    '--output-dir',
    join(dir, 'run'),
    '--owner',
    `student-${i}`,
    ...(values.namespace ? ['--namespace', values.namespace] : []),
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: { ...process.env, TERMLAB_STATE_DIR: join(dir, 'state') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c;
    });
    child.on('close', (code) =>
      resolve({ i, code, out, dir: join(dir, 'run'), seconds: (performance.now() - started) / 1000 }),
    );
  });
}

/** The simulated cluster runs in this process: how late its event loop ran (a starved sim would delay every API answer). */
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const started = performance.now();
try {
  const runs = await Promise.all(Array.from({ length: students }, (_, i) => runStudent(i)));
  const wall = (performance.now() - started) / 1000;
  const verdicts = new Map<string, number>();
  const wrong: string[] = [];
  let pairsPassed = 0;
  for (const run of runs) {
    const graded = await gradePaths([run.dir]).catch(() => ({ results: [], pairs: [], problems: ['no run folder'] }));
    for (const r of graded.results.filter((x) => !x.supersededBy)) {
      verdicts.set(r.verdict, (verdicts.get(r.verdict) ?? 0) + 1);
      if (r.verdict !== 'matches-model') wrong.push(`student-${run.i} ${r.scenario}: ${r.verdict}: ${r.explanation}`);
    }
    if (graded.pairs.some((p) => p.checks.every((c) => c.status === 'pass'))) pairsPassed++;
    if (run.code !== 0)
      wrong.push(`student-${run.i}: exit ${run.code}: ${run.out.trim().split('\n').slice(-3).join(' | ')}`);
  }
  const kc = new k8s.KubeConfig();
  if (sim) kc.loadFromString(sim.kubeconfig);
  else kc.loadFromFile(sharedKubeconfig);
  const pods = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listPodForAllNamespaces({ labelSelector: 'app.kubernetes.io/managed-by=termlab' });
  console.log(`students: ${students}`);
  console.log(`runs_exit_0: ${runs.filter((r) => r.code === 0).length}`);
  console.log(`pairs_passed: ${pairsPassed}`);
  for (const [verdict, n] of [...verdicts].sort()) console.log(`verdict_${verdict.replace(/-/g, '_')}: ${n}`);
  console.log(`wrong_verdicts: ${wrong.length}`);
  for (const w of wrong.slice(0, 20)) console.log(`  ${w}`);
  console.log(`pods_left: ${pods.items.length}`);
  console.log(`slowest_student_seconds: ${Math.max(...runs.map((r) => r.seconds)).toFixed(1)}`);
  console.log(`class_wall_seconds: ${wall.toFixed(1)}`);
  if (sim) console.log(`sim_event_loop_delay_p99_ms: ${(loop.percentile(99) / 1e6).toFixed(0)}`);
  if (sim) console.log(`sim_event_loop_delay_max_ms: ${(loop.max / 1e6).toFixed(0)}`);
  if (wrong.length || pods.items.length) process.exitCode = 1;
} finally {
  await sim?.stop();
}
