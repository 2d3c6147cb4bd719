// bench:verify — `termlab verify` at 200 requests/s on the simulated cluster: a Deployment of the
// lab image with a 5 s preStop sleep (so a failure is the load path's, not the app's) behind a
// NodePort Service, rolled by `termlab verify --action rollout-restart` as a real CLI process.
// Figures, all from the saved observation (the load pod's own log and clock):
// - requests, requests_failed, requests_per_s (over the span of the sends: a generator that cannot
//   keep up shows here), requests_per_s_target;
// - load_path_overhead_ms_p50/p95: a completed request's time from its send (its connection opened)
//   beyond the server's own work (WORK_MS): the connect, the sim's service proxy, the answer and the
//   body. Not a real node's kube-proxy;
// - send_lag_ms_p95: how far sends fell behind the steady schedule (a late timer, or a wait for one
//   of the --connections to free up: the generator's own share, kept out of the overhead);
// - requests_unsent: due but still waiting for a connection when the load stopped;
// - verify_wall_s: the whole command, plan to reports.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as k8s from '@kubernetes/client-node';
import { parseLoadLog } from '../harness/grade/rollout/records.ts';
import { VerificationObservationSchema } from '../harness/observation/verification.ts';
import { runCli } from '../test/support/cli.ts';
import { createApp } from '../test/verify/support.ts';
import { percentile } from './stats.ts';

const RATE = 200;
const WORK_MS = 20;
const dir = mkdtempSync(join(tmpdir(), 'termlab-bench-verify-'));
const kubeconfig = join(dir, 'kubeconfig');
const sim = spawn(process.execPath, ['bin/termlab.js', 'sim', '--port', '0', '--kubeconfig-out', kubeconfig], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = createInterface({ input: sim.stdout! });
for await (const line of lines) if (line.includes(' listening on ')) break;
try {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  await createApp(kc, 'default', { name: 'web', preStopSleep: 5 });
  const started = performance.now();
  const r = await runCli([
    'verify',
    'deployment/web',
    '--kubeconfig',
    kubeconfig,
    '--rate',
    String(RATE),
    '--connections',
    process.env.BENCH_CONNECTIONS ?? '64',
    '--path',
    `/work?ms=${WORK_MS}`,
    '--output-dir',
    join(dir, 'out'),
    '-o',
    'json',
  ]);
  const wall = (performance.now() - started) / 1000;
  const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1)) as { observation: string; verdict: string };
  const o = VerificationObservationSchema.parse(JSON.parse(readFileSync(summary.observation, 'utf8')));
  const records = parseLoadLog(o.evidence.loadLog).records;
  const completed = records.filter((x) => x.outcome === 'completed');
  const span = (Math.max(...records.map((x) => x.sent.mono)) - Math.min(...records.map((x) => x.sent.mono))) / 1000;
  const overhead = completed.map((x) => x.ended.mono - x.sent.mono - WORK_MS);
  console.log(`verdict: ${summary.verdict} (exit ${r.code})`);
  console.log(`requests: ${records.length}`);
  console.log(`requests_failed: ${records.length - completed.length}`);
  console.log(`requests_per_s: ${((records.length - 1) / span).toFixed(1)}`);
  console.log(`requests_per_s_target: ${RATE}`);
  console.log(`load_path_overhead_ms_p50: ${percentile(overhead, 0.5).toFixed(2)}`);
  console.log(`load_path_overhead_ms_p95: ${percentile(overhead, 0.95).toFixed(2)}`);
  console.log(
    `send_lag_ms_p95: ${percentile(
      records.map((x) => x.sent.mono - x.dueMono),
      0.95,
    ).toFixed(2)}`,
  );
  const end = o.evidence.loadLog?.lines
    .map((l) => l.text)
    .filter((l) => l.includes('"event":"load-end"'))
    .at(-1);
  console.log(`requests_unsent: ${end ? ((JSON.parse(end) as { unsent?: number }).unsent ?? 'n/a') : 'n/a'}`);
  console.log(`verify_wall_s: ${wall.toFixed(1)}`);
  // What failed, so a regression names itself: outcome/errorCode/stage counts and the phase.
  const failedBy = new Map<string, number>();
  for (const x of records)
    if (x.outcome !== 'completed') {
      const k = `${x.outcome}/${x.errorCode}/${x.stage}`;
      failedBy.set(k, (failedBy.get(k) ?? 0) + 1);
    }
  for (const [k, n] of failedBy) console.log(`requests_failed_as.${k}: ${n}`);
} finally {
  sim.kill('SIGINT');
  await once(sim, 'exit');
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept: ${dir}`);
}
