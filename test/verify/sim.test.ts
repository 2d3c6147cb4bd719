// `termlab verify` end to end on the simulated cluster: the team's Deployments made through the API,
// the CLI run as a real process against them, each saved file graded again offline by `termlab grade`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { runCli } from '../support/cli.ts';
import { createApp, runVerify } from './support.ts';

let sim: SimCluster;
let kc: k8s.KubeConfig;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-'));
const kubeconfig = join(dir, 'kubeconfig');
const RUN_TIMEOUT = 240_000;

beforeAll(async () => {
  sim = await startSimCluster();
  writeFileSync(kubeconfig, sim.kubeconfig);
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await Promise.all([
    createApp(kc, 'default', { name: 'web' }),
    createApp(kc, 'default', { name: 'web-hook', preStopSleep: 5 }),
    createApp(kc, 'default', { name: 'web-imm', mode: 'immediate' }),
    createApp(kc, 'default', { name: 'web-del', serviceType: 'ClusterIP' }),
  ]);
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

interface Summary {
  verdict: string;
  failed: number;
  requests: number;
  byCause: Record<string, number>;
  advice: string[];
  observation: string;
}

const verify = (name: string, args: string[]) => runVerify<Summary>(kubeconfig, join(dir, name), name, args);

/** The saved file graded offline: the same verdict, causes and exit code. */
async function expectSameOffline(summary: Summary, code: number | null): Promise<void> {
  const r = await runCli(['grade', summary.observation, '-o', 'json']);
  expect(r.code).toBe(code);
  const offline = JSON.parse(r.stdout) as Summary;
  expect({
    verdict: offline.verdict,
    failed: offline.failed,
    requests: offline.requests,
    byCause: offline.byCause,
    advice: offline.advice,
  }).toEqual({
    verdict: summary.verdict,
    failed: summary.failed,
    requests: summary.requests,
    byCause: summary.byCause,
    advice: summary.advice,
  });
}

async function termlabObjectsLeft(): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const selector = { namespace: 'default', labelSelector: 'app.kubernetes.io/managed-by=termlab' };
  const [pods, services] = await Promise.all([core.listNamespacedPod(selector), core.listNamespacedService(selector)]);
  return [
    ...pods.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `pod/${p.metadata!.name}`),
    ...services.items.map((s) => `service/${s.metadata!.name}`),
  ];
}

describe('termlab verify on the simulated cluster', () => {
  it(
    'no preStop: a rollout restart fails, the failures are cause 1, and the advice is a preStop sleep from the measured propagation',
    async () => {
      const { code, summary, stderr } = await verify('web', ['--action', 'rollout-restart', '--path', '/work?ms=200']);
      expect(code, stderr).toBe(1);
      expect(summary.verdict).toBe('fail');
      expect(summary.byCause['1']).toBeGreaterThan(0);
      expect(summary.byCause['1']).toBeGreaterThanOrEqual(summary.failed / 2);
      expect(summary.advice.join('\n')).toMatch(
        /preStop: sleep` of at least \d+s — endpoint removal reached the proxies up to \d+\.\ds after each deletion/,
      );
      const d = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: 'web', namespace: 'default' });
      expect(d.spec?.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toMatch(
        /^\d{4}-\d\d-\d\dT/,
      );
      expect(await termlabObjectsLeft()).toEqual([]);
      await expectSameOffline(summary, 1);
    },
    RUN_TIMEOUT,
  );

  it(
    'preStop sleep 5: the same restart passes with no request failed',
    async () => {
      const { code, summary, stderr } = await verify('web-hook', ['--path', '/work?ms=200']);
      expect(code, stderr).toBe(0);
      expect(summary).toMatchObject({ verdict: 'pass', failed: 0 });
      expect(summary.requests).toBeGreaterThan(100);
      await expectSameOffline(summary, 0);
    },
    RUN_TIMEOUT,
  );

  it(
    'immediate mode with 2 s requests: requests in flight at TERM fail, cause 2',
    async () => {
      const { code, summary, stderr } = await verify('web-imm', ['--path', '/work?ms=2000', '--rate', '20']);
      expect(code, stderr).toBe(1);
      expect(summary.byCause['2']).toBeGreaterThan(0);
      expect(summary.advice.join('\n')).toMatch(/after TERM with requests in flight/);
      await expectSameOffline(summary, 1);
    },
    RUN_TIMEOUT,
  );

  it(
    'delete-pod: one pod deleted by UID through a temporary NodePort twin of a ClusterIP Service; nothing else changed',
    async () => {
      const apps = kc.makeApiClient(k8s.AppsV1Api);
      const before = await apps.readNamespacedDeployment({ name: 'web-del', namespace: 'default' });
      const { code, summary, stderr } = await verify('web-del', ['--action', 'delete-pod', '--path', '/work?ms=200']);
      expect([0, 1], stderr).toContain(code);
      // No preStop: TERM follows the endpoint's removal within the proxies' time, a race either way it went.
      expect(summary.advice.join('\n')).toMatch(
        code === 0 ? /^no request failed, but by a narrow margin: TERM came/m : /preStop: sleep` of at least \d+s/,
      );
      const grade = JSON.parse((await runCli(['grade', summary.observation, '-o', 'json'])).stdout) as {
        terminations: number;
        pods: { old: boolean; deletion: number | null }[];
      };
      expect(grade.terminations).toBe(1);
      expect(grade.pods.filter((p) => p.deletion !== null)).toHaveLength(1);
      const after = await apps.readNamespacedDeployment({ name: 'web-del', namespace: 'default' });
      expect(after.metadata?.generation).toBe(before.metadata?.generation);
      expect(await termlabObjectsLeft()).toEqual([]);
      await expectSameOffline(summary, code);
    },
    RUN_TIMEOUT,
  );
});
