// bench:verify — what the simulated cluster's own load path adds, then `termlab verify` on it, in one run
// at 1,000 requests/s (BENCH_RATE). Every latency is from the request's due time on the steady schedule, not
// from its send, so a generator that falls behind cannot hide it (coordinated omission).
// 1. The same generator (the lab's LAB_MODE=load, one connection per request) against one pod of the lab
//    image, in alternating 5 s rounds (BENCH_ROUNDS): `straight.*` to the pod's own port, `service_proxy.*`
//    through its NodePort Service (the sim's kube-proxy). overhead_ms_pXX: a completed request's time beyond
//    the server's work (WORK_MS); added_ms_pXX: the Service proxy's beyond straight's, at that percentile;
//    service_proxy_added_ms_p95 against the bound (issue #42: 2 ms). sim_cpu_us_per_request: the sim
//    process's CPU over the path's rounds per request (straight's is the sim's own background).
// 2. `termlab verify deployment/web --action rollout-restart` as a real CLI process (BENCH_VERIFY=0 skips
//    it): a Deployment of the lab image with a 5 s preStop sleep (so a failure is the load path's, not the
//    app's) behind a NodePort Service, its load pod inside the sim. Figures from the saved observation:
//    verify.requests, requests_failed, requests_per_s (over the span of the sends), overhead_ms_p50/p95/p99
//    (from the due time), send_lag_ms_p95 (the generator's own share), requests_unsent, verify_wall_s.
// BENCH_BASELINE=DIR (another checkout, its node_modules installed): the same on that checkout's sim in the
// same rounds, as `baseline_straight.*` and `baseline_service_proxy.*`, so a change is judged on one machine state.
// machine_loadavg_1m before and after: these figures on a busy machine are not a quiet one's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseLoadLog } from '../harness/grade/rollout/records.ts';
import { VerificationObservationSchema } from '../harness/observation/verification.ts';
import { runCli } from '../test/support/cli.ts';
import { createApp } from '../test/verify/support.ts';
import {
  alternate,
  CONNECTIONS,
  RATE,
  ROUNDS,
  WORK_MS,
  ms,
  nodePort,
  podHostPort,
  printAgainstBound,
  printMachine,
  printPath,
  startBenchSim,
} from './load-path.ts';
import { percentile } from './stats.ts';

const sim = await startBenchSim('verify');
const baseline = process.env.BENCH_BASELINE
  ? await startBenchSim('verify-baseline', [], process.env.BENCH_BASELINE)
  : null;
try {
  printMachine();
  console.log(`requests_per_s_target: ${RATE}`);
  // BENCH_ROUNDS=0: verify alone.
  if (ROUNDS > 0) {
    const paths = [];
    for (const [prefix, s] of [
      ['', sim],
      ['baseline_', baseline],
    ] as const) {
      if (!s) continue;
      await createApp(s.kc, 'default', { name: 'direct', replicas: 1 });
      paths.push(
        {
          name: `${prefix}straight`,
          target: `http://127.0.0.1:${await podHostPort(s.kc, 'default', 'app=direct')}`,
          cpuPid: s.pid,
        },
        {
          name: `${prefix}service_proxy`,
          target: `http://127.0.0.1:${await nodePort(s.kc, 'default', 'direct')}`,
          cpuPid: s.pid,
        },
      );
    }
    const figures = await alternate(paths, ROUNDS, {
      rate: RATE,
      durationMs: 5000,
      workMs: WORK_MS,
      connections: CONNECTIONS,
    });
    for (const prefix of baseline ? ['', 'baseline_'] : ['']) {
      const straight = figures.get(`${prefix}straight`)!;
      printPath(`${prefix}straight`, straight);
      printPath(`${prefix}service_proxy`, figures.get(`${prefix}service_proxy`)!, straight);
      printAgainstBound(`${prefix}service_proxy`, figures.get(`${prefix}service_proxy`)!, straight);
    }
  }

  if (process.env.BENCH_VERIFY !== '0') {
    // A rollout of three pods takes well under 2 min; a tighter progress deadline bounds verify's load to what
    // its file holds at this rate (harness/verify/size.ts refuses the default 600 s bound at 1,000 req/s).
    await createApp(sim.kc, 'default', { name: 'web', preStopSleep: 5, progressDeadlineSeconds: 120 });
    const started = performance.now();
    const r = await runCli([
      'verify',
      'deployment/web',
      '--kubeconfig',
      sim.kubeconfig,
      '--rate',
      String(RATE),
      '--connections',
      process.env.BENCH_CONNECTIONS ?? String(CONNECTIONS),
      '--path',
      `/work?ms=${WORK_MS}`,
      '--output-dir',
      join(sim.dir, 'out'),
      '-o',
      'json',
    ]);
    const wall = (performance.now() - started) / 1000;
    const at = r.stdout.indexOf('\n{');
    if (at < 0) throw new Error(`termlab verify printed no JSON summary (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    const summary = JSON.parse(r.stdout.slice(at + 1)) as {
      observation: string;
      verdict: string;
    };
    const o = VerificationObservationSchema.parse(JSON.parse(readFileSync(summary.observation, 'utf8')));
    const records = parseLoadLog(o.evidence.loadLog).records;
    const completed = records.filter((x) => x.outcome === 'completed');
    const sends = records.map((x) => x.sent.mono);
    const span = (Math.max(...sends) - Math.min(...sends)) / 1000;
    const overhead = completed.map((x) => x.ended.mono - x.dueMono - WORK_MS);
    console.log(`verify.verdict: ${summary.verdict} (exit ${r.code})`);
    console.log(`verify.requests: ${records.length}`);
    console.log(`verify.requests_failed: ${records.length - completed.length}`);
    console.log(`verify.requests_per_s: ${((records.length - 1) / span).toFixed(1)}`);
    for (const q of [0.5, 0.95, 0.99])
      console.log(`verify.overhead_ms_p${Math.round(q * 100)}: ${ms(percentile(overhead, q))}`);
    console.log(
      `verify.send_lag_ms_p95: ${ms(
        percentile(
          records.map((x) => x.sent.mono - x.dueMono),
          0.95,
        ),
      )}`,
    );
    const end = o.evidence.loadLog?.lines
      .map((l) => l.text)
      .filter((l) => l.includes('"event":"load-end"'))
      .at(-1);
    console.log(`verify.requests_unsent: ${end ? ((JSON.parse(end) as { unsent?: number }).unsent ?? 'n/a') : 'n/a'}`);
    console.log(`verify.wall_s: ${wall.toFixed(1)}`);
    // What failed, so a regression names itself: outcome/errorCode/stage counts.
    const failedBy = new Map<string, number>();
    for (const x of records)
      if (x.outcome !== 'completed') {
        const k = `${x.outcome}/${x.errorCode}/${x.stage}`;
        failedBy.set(k, (failedBy.get(k) ?? 0) + 1);
      }
    for (const [k, n] of failedBy) console.log(`verify.requests_failed_as.${k}: ${n}`);
  }
  printMachine();
} finally {
  await baseline?.stop();
  await sim.stop();
}
