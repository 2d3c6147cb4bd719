// bench:edge — what the simulated edge (`termlab sim --edge`: the sim's Traefik v3.7.13) adds, beside the
// same generator sent straight to the pod and through the sim's Service proxy, in one run at 1,000
// requests/s (BENCH_RATE) with kept-alive connections (LOAD_KEEPALIVE=1, as browsers and services send;
// BENCH_KEEPALIVE=0 for one connection per request). One pod of the lab image behind a NodePort Service
// and an HTTPRoute on the edge's Gateway (no hostnames: any Host); alternating 5 s rounds (BENCH_ROUNDS) over
// - straight.*: the pod's own port;
// - service_proxy.*: the Service's NodePort (the sim's kube-proxy);
// - edge.*: the edge's pod's own port (web, 8000), so the figure is the edge's alone: it forwards to the
//   pod's endpoint itself, as Traefik does, not through the Service;
// - edge_via_service.*: the edge's Service's NodePort, as a client outside the cluster reaches it.
// Each: requests, requests_failed, requests_per_s, overhead_ms_p50/p95/p99 from the due time beyond the
// server's work, added_ms_pXX beyond straight; then <path>_added_ms_p95 against the bound (2 ms).
// sim_cpu_us_per_request: the sim process's CPU per request (its Service proxy, the kubelet following the
// pods' logs; the edge is a pod, a process of its own, not counted).
// keepalive: whether the generator kept connections (its records say `reused`): a generator without
// contract C4 opens one per request whatever it is asked.
import { request } from 'node:http';
import { setTimeout } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { createApp } from '../test/verify/support.ts';
import {
  alternate,
  CONNECTIONS,
  RATE,
  ROUNDS,
  WORK_MS,
  nodePort,
  podHostPort,
  printAgainstBound,
  printMachine,
  printPath,
  startBenchSim,
} from './load-path.ts';

const EDGE_NAMESPACE = 'termlab-edge';

const sim = await startBenchSim('edge', ['--edge']);
try {
  printMachine();
  console.log(`requests_per_s_target: ${RATE}`);
  await createApp(sim.kc, 'default', { name: 'direct', replicas: 1 });
  await sim.kc.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    namespace: 'default',
    plural: 'httproutes',
    body: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'direct' },
      spec: {
        parentRefs: [{ name: 'edge', namespace: EDGE_NAMESPACE }],
        rules: [{ backendRefs: [{ name: 'direct', port: 80 }] }],
      },
    },
  });
  const edgePort = await podHostPort(sim.kc, EDGE_NAMESPACE, 'app.kubernetes.io/name=traefik');
  const edgeNodePort = await nodePort(sim.kc, EDGE_NAMESPACE, 'traefik');
  const keepAlive = process.env.BENCH_KEEPALIVE !== '0';
  const env: Record<string, string> = keepAlive ? { LOAD_KEEPALIVE: '1' } : {};
  await routed(`http://127.0.0.1:${edgePort}`);
  const paths = [
    {
      name: 'straight',
      target: `http://127.0.0.1:${await podHostPort(sim.kc, 'default', 'app=direct')}`,
      env,
      cpuPid: sim.pid,
    },
    {
      name: 'service_proxy',
      target: `http://127.0.0.1:${await nodePort(sim.kc, 'default', 'direct')}`,
      env,
      cpuPid: sim.pid,
    },
    { name: 'edge', target: `http://127.0.0.1:${edgePort}`, env, cpuPid: sim.pid },
    { name: 'edge_via_service', target: `http://127.0.0.1:${edgeNodePort}`, env, cpuPid: sim.pid },
  ];
  const figures = await alternate(paths, ROUNDS, {
    rate: RATE,
    durationMs: 5000,
    workMs: WORK_MS,
    connections: CONNECTIONS,
  });
  const straight = figures.get('straight')!;
  console.log(`keepalive_asked: ${keepAlive ? 'yes' : 'no'}`);
  console.log(`keepalive: ${straight.reused === null ? 'unsupported by this load generator (contract C4)' : 'yes'}`);
  console.log(
    `keepalive_reused_share: ${straight.reused === null ? 'n/a' : (straight.reused / straight.requests).toFixed(3)}`,
  );
  for (const p of paths) printPath(p.name, figures.get(p.name)!, p.name === 'straight' ? undefined : straight);
  for (const p of paths.slice(1)) printAgainstBound(p.name, figures.get(p.name)!, straight);
  printMachine();
} finally {
  await sim.stop();
}

/** Until the edge routes the HTTPRoute (its provider's throttle, then its configuration), up to a minute. */
async function routed(base: string): Promise<void> {
  const until = performance.now() + 60_000;
  for (;;) {
    const status = await statusOf(base);
    if (status === 200) return;
    if (performance.now() > until)
      throw new Error(`the edge at ${base} does not route the HTTPRoute yet: last status ${status}`);
    await setTimeout(100);
  }
}

function statusOf(base: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${base}/work?ms=1`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}
