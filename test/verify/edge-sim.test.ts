// `termlab verify --via httproute/NAME` end to end on the simulated cluster with its edge (a simulated
// Traefik v3.7.13 behind a Gateway): the CLI as a real process, the load kept-alive through the edge
// with each route's Host, the edge's access log read from its pod, each saved file graded again offline.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { runCli } from '../support/cli.ts';
import { publishedAtEdge } from '../support/sim-apps.ts';
import { runVerify } from './support.ts';
import type { VerificationObservation } from '../../harness/observation/verification.ts';

let sim: SimCluster;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-edge-'));
const kubeconfig = join(dir, 'kubeconfig');
const RUN_TIMEOUT = 240_000;

/** One app as manifests/verify-edge.yaml has it, its Service, and its HTTPRoute on the edge's Gateway by Host. */
function app(name: string, preStopSleep: number | null, keepAlive: 'polite' | 'naive'): Record<string, any>[] {
  const labels = { app: name };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'default', labels },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'web',
                image: 'termlab/lab-server:0.1.0',
                env: [
                  { name: 'LAB_MODE', value: 'graceful' },
                  { name: 'LAB_KEEPALIVE', value: keepAlive },
                  { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
                ],
                ports: [{ name: 'http', containerPort: 8080 }],
                readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
                ...(preStopSleep ? { lifecycle: { preStop: { sleep: { seconds: preStopSleep } } } } : {}),
              },
            ],
          },
        },
      },
    },
    ...publishedAtEdge(name, labels),
  ];
}

beforeAll(async () => {
  sim = await startSimCluster({ edge: true });
  writeFileSync(kubeconfig, sim.kubeconfig);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web-ing', namespace: 'default' },
    spec: {
      ingressClassName: 'traefik',
      rules: [
        {
          host: 'web-ing.example',
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web-ing', port: { number: 80 } } } }],
          },
        },
      ],
    },
  };
  const objects = [...app('web', null, 'polite'), ...app('web-sleep', 5, 'polite'), ...app('web-ing', 5, 'polite')];
  for (const o of [...objects.filter((o) => !(o.kind === 'HTTPRoute' && o.metadata.name === 'web-ing')), ingress])
    await client.create(o);
}, 180_000);
afterAll(async () => {
  await sim?.stop();
});

interface Summary {
  verdict: string;
  failed: number;
  requests: number;
  advice: string[];
  reasoning: string[];
  edge: {
    via: string;
    readable: boolean;
    byCause: Record<string, number>;
    undecided: number;
    lags: { pod: string; removed: number; lastSent: number; lag: number; deletion: number | null }[];
  } | null;
  observation: string;
}

const verify = (name: string, args: string[]) =>
  runVerify<Summary>(kubeconfig, join(dir, name), name, ['--path', '/work?ms=200', ...args]);

async function expectSameOffline(summary: Summary, code: number | null): Promise<void> {
  const r = await runCli(['grade', summary.observation, '-o', 'json']);
  expect(r.code).toBe(code);
  const offline = JSON.parse(r.stdout) as Summary & { edge: { byCause: Record<string, number> } };
  expect([offline.verdict, offline.failed, offline.advice, offline.edge.byCause]).toEqual([
    summary.verdict,
    summary.failed,
    summary.advice,
    summary.edge!.byCause,
  ]);
}

describe('termlab verify --via httproute on the simulated cluster', () => {
  it(
    "no preStop: it fails, the failures are the edge's lag, and the advice is a sleep from the lag measured",
    async () => {
      const { code, summary, stderr } = await verify('web', ['--via', 'httproute/web']);
      expect(code, stderr).toBe(1);
      expect(summary.verdict).toBe('fail');
      const edge = summary.edge!;
      expect(edge).toMatchObject({ via: 'httproute/web', readable: true });
      expect(edge.byCause['edge-routed-to-removed-endpoint']).toBeGreaterThanOrEqual(summary.failed / 2);
      // The sleep follows from the figures: the edge's last request to a deleted pod after its deletion, + 1 s, rounded up.
      expect(edge.lags.length).toBeGreaterThan(0);
      const span = Math.max(...edge.lags.map((l) => l.lastSent - l.deletion!));
      const sleep = summary.advice
        .map((a) => /add `preStop: sleep` of at least (\d+)s — preStop sleep ≥ the edge's lag/.exec(a)?.[1])
        .find(Boolean);
      expect(Number(sleep)).toBeGreaterThan(span);
      expect(Number(sleep)).toBeLessThanOrEqual(Math.ceil(span + 0.05 + 1));
      expect(summary.reasoning.join('\n')).toMatch(/measured from \d+ removal\(s\)/);
      // Every app pod's log is kept, the new ones' too (their port ties the edge's lines to them on the sim).
      const o = JSON.parse(readFileSync(summary.observation, 'utf8')) as VerificationObservation;
      const appPods = new Set(o.evidence.podEvents.filter((e) => e.role !== 'load').map((e) => e.uid));
      expect(new Set(o.evidence.podLogs.map((l) => l.uid))).toEqual(appPods);
      expect(appPods.size).toBe(6);
      // The reports draw one of those failures through the edge, as the lab's report does, with its caption.
      const html = readFileSync(join(dirname(summary.observation), 'report.html'), 'utf8');
      const drawn = /aria-label="timeline of request (L\d+) through the edge"/.exec(html)?.[1];
      expect(drawn, 'the edge picture in report.html').toBeDefined();
      const md = readFileSync(join(dirname(summary.observation), 'report.md'), 'utf8');
      expect(md).toContain(`One failed request through the edge: Request ${drawn} (`);
      await expectSameOffline(summary, 1);
    },
    RUN_TIMEOUT,
  );

  it(
    'a 5 s preStop sleep and the polite app: nothing fails, and the sleep outlasted the lag measured',
    async () => {
      const { code, summary, stderr } = await verify('web-sleep', ['--via', 'httproute/web-sleep']);
      expect(code, stderr).toBe(0);
      expect(summary).toMatchObject({ verdict: 'pass', failed: 0 });
      expect(summary.requests).toBeGreaterThan(100);
      expect(summary.reasoning.join('\n')).toMatch(/the preStop sleep \(5s\) outlasted the edge's lag here by/);
      await expectSameOffline(summary, 0);
    },
    RUN_TIMEOUT,
  );

  it(
    'through an Ingress (no status: the edge Service found in any namespace, Host from its rule): the 5 s sleep passes',
    async () => {
      const { code, summary, stderr } = await verify('web-ing', ['--via', 'ingress/web-ing']);
      expect(code, stderr).toBe(0);
      expect(summary).toMatchObject({ verdict: 'pass', failed: 0, edge: { via: 'ingress/web-ing', readable: true } });
      expect(summary.edge!.lags.length).toBeGreaterThan(0);
    },
    RUN_TIMEOUT,
  );

  it('a route that is not there is named with exit 6 before anything changes', async () => {
    const missing = await runCli(['verify', 'deployment/web', '--kubeconfig', kubeconfig, '--via', 'httproute/nope']);
    expect(missing.code).toBe(6);
    expect(missing.stderr).toContain('--via httproute/nope: not found in namespace default');
  });
});
