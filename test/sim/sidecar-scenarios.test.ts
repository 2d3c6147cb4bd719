// The pods of manifests/sidecars.yaml as termlab renders them (the lab template, the scenario's sidecar
// block), on the simulated cluster, with the request sent through the proxy as a client behind it would:
// a regular proxy that exits at TERM cuts what the app drains; the same proxy as a native sidecar lets it
// complete. The outcome is the client's; the order comes from the sim's truth.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadScenarios } from '../../harness/scenario/load.ts';
import { renderPod, requestPort } from '../../harness/scenario/render.ts';
import type { FileScenario } from '../../harness/scenario/schema.ts';
import { PROXY_CONTAINER } from '../../server/contract.ts';
import { readLines } from '../support/labServer.ts';
import { repoRoot } from '../support/processes.ts';
import { isReady, startSimClient, watchPod, type SimClient } from '../support/sim.ts';

let c: SimClient;
let scenarios: Map<string, FileScenario>;
const template = parse(readFileSync(join(repoRoot, 'manifests/lab-pod.yaml'), 'utf8'));
beforeAll(async () => {
  c = await startSimClient();
  scenarios = new Map(
    ((await loadScenarios(join(repoRoot, 'manifests/sidecars.yaml'))) as FileScenario[]).map((s) => [s.name, s]),
  );
});
afterAll(async () => {
  await c.sim.stop();
});

/** One scenario's pod, its request through the proxy's published port, the delete after deleteDelayMs. */
async function run(name: string) {
  const scenario = scenarios.get(name)!;
  const body = renderPod(template, scenario, { podName: name, owner: 'test', runId: 'sidecars' });
  const created = await c.core.createNamespacedPod({ namespace: 'default', body });
  const watch = await watchPod(c.kc, 'default', name, created.metadata!.resourceVersion);
  const ready = await watch.waitFor(isReady, `${name} ready`);
  const all = [...(ready.pod.spec!.initContainers ?? []), ...ready.pod.spec!.containers];
  const port = requestPort(template, scenario);
  expect(port).toBe(PROXY_CONTAINER.port);
  const hostPort = all.flatMap((x) => x.ports ?? []).find((p) => p.containerPort === port)!.hostPort!;
  const res = await request(`http://127.0.0.1:${hostPort}/work?ms=${scenario.workMs}&id=${name}`);
  let accepted!: () => void;
  const acceptedP = new Promise<void>((resolve) => {
    accepted = resolve;
  });
  const lines = readLines(res.body, (line) => {
    if (line.event === 'accepted') accepted();
  });
  await acceptedP;
  // A timer here is the scenario's own delay (deleteDelayMs), not a wait for something to happen.
  await new Promise((resolve) => setTimeout(resolve, scenario.deleteDelayMs));
  await c.core.deleteNamespacedPod({ name, namespace: 'default' });
  const outcome = await lines;
  await watch.waitFor(
    (e) => e.pod.status?.phase === 'Succeeded' || e.pod.status?.phase === 'Failed',
    `${name} terminal`,
    40_000,
  );
  await c.core.patchNamespacedPod({
    name,
    namespace: 'default',
    body: [{ op: 'remove', path: '/metadata/finalizers' }],
  });
  await watch.waitFor((e) => e.type === 'DELETED', `${name} DELETED`, 40_000);
  watch.stop();
  const truth = c.sim.truth(created.metadata!.uid!)!.containers!;
  return {
    outcome,
    completed: outcome.lines.at(-1)?.event === 'done',
    app: truth.lab!,
    proxy: truth[PROXY_CONTAINER.name]!,
  };
}

describe('manifests/sidecars.yaml on the simulated cluster, through the proxy', () => {
  it('sidecar-regular-proxy: the proxy gets TERM with the app and exits, cutting the request the app still drains', async () => {
    const { outcome, completed, app, proxy } = await run('sidecar-regular-proxy');
    expect(completed).toBe(false);
    expect(outcome.error).not.toBeNull();
    expect(proxy.termSentAt!).toBeLessThan(app.exitedAt!);
    expect(proxy.exitCode).toBe(17);
    expect(proxy.turnWaitSeconds).toBeUndefined();
  });

  it('sidecar-native-proxy: the app stops first, the request completes, then the proxy gets TERM', async () => {
    const { completed, app, proxy } = await run('sidecar-native-proxy');
    expect(completed).toBe(true);
    expect(app.exitCode).toBe(0);
    expect(app.exitedAt!).toBeLessThanOrEqual(proxy.termSentAt!);
  });

  it('sidecar-native-short-grace: the grace runs out while the proxy waits; it gets the 2 s minimum, TERM before the app is gone', async () => {
    const { completed, app, proxy } = await run('sidecar-native-short-grace');
    expect(completed).toBe(false);
    expect(app).toMatchObject({ hookElapsedSeconds: 4, stopGracePeriodSeconds: 2, exitCode: 137 });
    expect(Math.trunc(proxy.turnWaitSeconds!)).toBe(5);
    expect(proxy.stopGracePeriodSeconds).toBe(2);
    expect(proxy.termSentAt!).toBeLessThan(app.exitedAt!);
  });

  it("sidecar-prestop-parallel: the proxy's own preStop runs beside the app's, and the request completes", async () => {
    const { completed, app, proxy } = await run('sidecar-prestop-parallel');
    expect(completed).toBe(true);
    expect(proxy.hookStartAt!).toBeLessThan(app.hookEndAt!);
    expect(proxy.hookEndAt!).toBeLessThan(app.hookEndAt!);
    expect(app.exitedAt!).toBeLessThanOrEqual(proxy.termSentAt!);
  });
});
