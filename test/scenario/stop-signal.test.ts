// The stop-signal lesson's scenario fields (drainSignal, stopSignal): refused with the field and the names
// allowed, and rendered into the pod as the API needs them (LAB_DRAIN_SIGNAL, lifecycle.stopSignal, spec.os).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadScenarios } from '../../harness/scenario/load.ts';
import { renderPod } from '../../harness/scenario/render.ts';
import { ScenarioSchema } from '../../harness/scenario/schema.ts';
import { describeSetup } from '../../harness/scenario/setup.ts';
import { LINUX_STOP_SIGNALS, StopSignalSchema } from '../../harness/scenario/stop-signal.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const template = parse(readFileSync(join(repoRoot, 'manifests/lab-pod.yaml'), 'utf8'));
const base = {
  name: 'sig',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 10,
  workMs: 5000,
  deleteDelayMs: 1000,
} as const;
const render = (fields: Record<string, unknown>) =>
  renderPod(template, ScenarioSchema.parse({ ...base, ...fields }), { podName: 'p', owner: 'o', runId: 'r' }) as any;
const envOf = (c: { env?: { name: string; value?: string }[] }) =>
  Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));

function file(extra: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'termlab-sig-')), 'scenarios.yaml');
  const lines = Object.entries(base).map(([k, v]) => `    ${k}: ${typeof v === 'object' ? '{ kind: none }' : v}`);
  writeFileSync(path, ['scenarios:', `  - ${lines[0]!.trim()}`, ...lines.slice(1), ...extra].join('\n') + '\n');
  return path;
}

describe('the scenario fields', () => {
  it('refuse a stop signal the API does not allow for linux, naming the field and the allowed names', async () => {
    await expect(loadScenarios(file(['    stopSignal: SIGWHATEVER']))).rejects.toMatchObject({
      code: 'SCENARIO_INVALID',
      message: expect.stringMatching(
        /scenario "sig": stopSignal \(line 8\): "SIGWHATEVER" is not a stop signal Kubernetes allows for linux \(signal\(7\)'s names from SIGABRT to SIGXFSZ, SIGRTMIN, SIGRTMIN\+1 to \+15, SIGRTMAX-14 to -1, SIGRTMAX\)$/,
      ),
    });
    await expect(loadScenarios(file(['    stopSignal: sigquit']))).rejects.toThrow(
      /stopSignal \(line 8\): "sigquit" is not a stop signal Kubernetes allows for linux; did you mean SIGQUIT\?$/,
    );
  });

  it('refuse a drain signal the lab server does not know, naming the ones it does', async () => {
    await expect(loadScenarios(file(['    drainSignal: SIGHUP']))).rejects.toThrow(
      /scenario "sig": drainSignal \(line 8\): "SIGHUP" is not a signal the lab server drains on \(one of SIGTERM, SIGQUIT, SIGINT, SIGUSR1, SIGUSR2\)/,
    );
  });

  it('refuse a stop signal that meets no handler of the lab server, and a drain signal outside graceful mode', async () => {
    await expect(loadScenarios(file(['    stopSignal: SIGQUIT']))).rejects.toThrow(
      /scenario "sig": stopSignal \(line 8\): the lab server handles SIGTERM and its drainSignal \(SIGTERM\) only: a stopSignal of SIGQUIT would meet no handler/,
    );
    await expect(loadScenarios(file(['    drainSignal: SIGQUIT']))).resolves.toHaveLength(1);
    expect(() => ScenarioSchema.parse({ ...base, mode: 'immediate', drainSignal: 'SIGQUIT' })).toThrow(
      /drainSignal changes what the graceful server drains on: it needs mode: graceful \(this scenario's is immediate\)/,
    );
    expect(() =>
      ScenarioSchema.parse({ ...base, stopSignal: 'SIGTERM', sidecar: { native: true, onTerm: 'drain' } }),
    ).toThrow(/one-container stop-signal lesson: leave out the sidecar block/);
  });

  it('accept every name the API allows, SIGRTMIN+n and SIGRTMAX-n among them', () => {
    for (const stopSignal of ['SIGRTMIN+1', 'SIGRTMAX-14', 'SIGPWR', 'SIGKILL'])
      expect(StopSignalSchema.parse(stopSignal)).toBe(stopSignal);
    expect(LINUX_STOP_SIGNALS).toHaveLength(65);
  });
});

describe('the pod they render', () => {
  it('sets LAB_DRAIN_SIGNAL, lifecycle.stopSignal and spec.os.name linux', () => {
    const pod = render({
      drainSignal: 'SIGQUIT',
      stopSignal: 'SIGQUIT',
      preStop: { kind: 'sleep-action', seconds: 1 },
    });
    const lab = pod.spec.containers[0];
    expect(envOf(lab)).toMatchObject({ LAB_MODE: 'graceful', LAB_DRAIN_SIGNAL: 'SIGQUIT' });
    expect(lab.lifecycle).toEqual({ preStop: { sleep: { seconds: 1 } }, stopSignal: 'SIGQUIT' });
    expect(pod.spec.os).toEqual({ name: 'linux' });
  });

  it('a drain signal alone: the env, no stopSignal and no spec.os (the API refuses neither)', () => {
    const pod = render({ drainSignal: 'SIGQUIT' });
    const lab = pod.spec.containers[0];
    expect(envOf(lab).LAB_DRAIN_SIGNAL).toBe('SIGQUIT');
    expect(lab.lifecycle).toBeUndefined();
    expect(pod.spec.os).toBeUndefined();
  });

  it("neither: the template's own stopSignal and LAB_DRAIN_SIGNAL are not kept (the run's signal is the scenario's)", () => {
    const own = structuredClone(template);
    own.spec.containers[0].lifecycle = { stopSignal: 'SIGUSR1' };
    own.spec.containers[0].env = [
      ...(own.spec.containers[0].env ?? []),
      { name: 'LAB_DRAIN_SIGNAL', value: 'SIGUSR1' },
    ];
    const pod = renderPod(own, ScenarioSchema.parse(base), { podName: 'p', owner: 'o', runId: 'r' }) as any;
    expect(pod.spec.containers[0].lifecycle).toBeUndefined();
    expect(envOf(pod.spec.containers[0]).LAB_DRAIN_SIGNAL).toBeUndefined();
  });
});

describe('the setup a student reads', () => {
  it('names the drain signal and the stop signal asked for', () => {
    expect(describeSetup(ScenarioSchema.parse({ ...base, drainSignal: 'SIGQUIT', stopSignal: 'SIGQUIT' }))).toMatch(
      /delete after 1s, drains on SIGQUIT, lifecycle\.stopSignal SIGQUIT$/,
    );
    expect(describeSetup(ScenarioSchema.parse(base))).not.toMatch(/drains on|stopSignal/);
  });
});

describe("the stop-signal pair's halves", () => {
  it('term-default drains on another signal and asks for none; quit-stop-signal asks for the drain signal', () => {
    const pair = (role: string) => ({ labPair: { id: 'stop-signal', role } });
    expect(ScenarioSchema.safeParse({ ...base, drainSignal: 'SIGQUIT', ...pair('term-default') }).success).toBe(true);
    expect(
      ScenarioSchema.safeParse({ ...base, drainSignal: 'SIGQUIT', stopSignal: 'SIGQUIT', ...pair('quit-stop-signal') })
        .success,
    ).toBe(true);
    for (const wrong of [
      { ...pair('term-default') },
      { drainSignal: 'SIGQUIT', stopSignal: 'SIGQUIT', ...pair('term-default') },
      { drainSignal: 'SIGQUIT', ...pair('quit-stop-signal') },
    ])
      expect(() => ScenarioSchema.parse({ ...base, ...wrong })).toThrow(
        /the stop-signal pair's halves drain on a signal/,
      );
  });
});

describe('termlab scenarios --reveal on manifests/stop-signal.yaml', () => {
  it("gives the model's answer at the gate's default, said as assumed, and the other side", async () => {
    const r = await runCli(['scenarios', '--scenarios', 'manifests/stop-signal.yaml', '--reveal']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /term-default .*\n.*\n {4}model: cut, exit 17 — .*on SIGTERM it leaves at once, exit 17\n/,
    );
    expect(r.stdout).toMatch(
      /quit-stop-signal .*lifecycle\.stopSignal SIGQUIT\)\n.*\n {4}model: cut, exit 17 — assumed dropped: ContainerStopSignals is alpha in 1\.\d+, off by default/,
    );
    expect(r.stdout).toContain(
      '    with ContainerStopSignals on, lifecycle.stopSignal is kept and the runtime sends SIGQUIT: completed, exit 0\n',
    );
    const json = JSON.parse(
      (await runCli(['scenarios', '--scenarios', 'manifests/stop-signal.yaml', '--reveal', '-o', 'json'])).stdout,
    );
    expect(json[1].prediction).toMatchObject({ outcome: 'cut', exitCode: 17, stopSignal: { delivered: false } });
    expect(json[1].otherSide).toMatchObject({ outcome: 'completed', exitCode: 0, stopSignal: { delivered: true } });
  });
});
