// A scenario's sidecar block rendered into the lab pod (harness/scenario/render.ts): where the proxy goes,
// what it is told, and the hooks a sidecar may not have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderPod, requestPort } from '../../harness/scenario/render.ts';
import { FileScenarioSchema, ScenarioSchema } from '../../harness/scenario/schema.ts';
import { repoRoot } from '../support/processes.ts';

const template = parse(readFileSync(join(repoRoot, 'manifests/lab-pod.yaml'), 'utf8'));
const base = {
  name: 'sc',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 30,
  workMs: 5000,
  deleteDelayMs: 1000,
} as const;
const envOf = (c: { env?: { name: string; value?: string }[] }) =>
  Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));

describe('the sidecar block', () => {
  it('native: the proxy is the last init container, restartPolicy Always, forwarding to the lab port; the request goes to it', () => {
    const scenario = FileScenarioSchema.parse({
      ...base,
      sidecar: { native: true, onTerm: 'drain', preStop: { kind: 'exec-sleep', seconds: 2 } },
    });
    const pod = renderPod(template, scenario, { podName: 'p', owner: 'o', runId: 'r' }) as any;
    expect(pod.spec.containers.map((c: { name: string }) => c.name)).toEqual(['lab']);
    const [proxy] = pod.spec.initContainers;
    expect(proxy).toMatchObject({
      name: 'proxy',
      image: pod.spec.containers[0].image,
      restartPolicy: 'Always',
      ports: [{ name: 'proxy', containerPort: 8081 }],
    });
    expect(envOf(proxy)).toEqual({
      LAB_MODE: 'proxy',
      PORT: '8081',
      PROXY_UPSTREAM_PORT: '8080',
      PROXY_ON_TERM: 'drain',
    });
    expect(proxy.env.filter((e: { valueFrom?: unknown }) => e.valueFrom).map((e: { name: string }) => e.name)).toEqual([
      'POD_UID',
      'POD_NAME',
    ]);
    expect(proxy.lifecycle.preStop.exec.command).toEqual(['/usr/local/bin/lab-hook', 'sleep', '2000']);
    expect(proxy.readinessProbe.httpGet).toEqual({ path: '/proxy/readyz', port: 'proxy' });
    expect(requestPort(template, scenario)).toBe(8081);
  });

  it('regular: the proxy is a second main container, with no restartPolicy and no hook', () => {
    const scenario = FileScenarioSchema.parse({ ...base, sidecar: { native: false, onTerm: 'exit' } });
    const pod = renderPod(template, scenario, { podName: 'p', owner: 'o', runId: 'r' }) as any;
    expect(pod.spec.initContainers).toBeUndefined();
    expect(pod.spec.containers.map((c: { name: string }) => c.name)).toEqual(['lab', 'proxy']);
    expect(pod.spec.containers[1].restartPolicy).toBeUndefined();
    expect(pod.spec.containers[1].lifecycle).toBeUndefined();
  });

  it('refuses a sidecar httpGet hook (the proxy would forward it to the app), naming the field; without a block, the lab port', () => {
    const bad = FileScenarioSchema.safeParse({
      ...base,
      sidecar: { native: true, onTerm: 'exit', preStop: { kind: 'httpGet', ms: 100 } },
    });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]).toMatchObject({
      path: ['sidecar', 'preStop'],
      message: expect.stringContaining('forwarded by the proxy to the app'),
    });
    expect(
      FileScenarioSchema.safeParse({ ...base, sidecar: { native: 'yes', onTerm: 'exit' } }).error?.issues[0]?.path,
    ).toEqual(['sidecar', 'native']);
    expect(requestPort(template, ScenarioSchema.parse(base))).toBe(8080);
  });
});
