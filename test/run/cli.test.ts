import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

const home = mkdtempSync(join(tmpdir(), 'termlab-home-'));
const noCluster = { HOME: home, KUBECONFIG: '' };

describe.concurrent('termlab run and scenarios: bad input and unreachable clusters', () => {
  it('lists the default scenarios with the model prediction (--reveal)', async () => {
    const r = await runCli(['scenarios', '--reveal', '-o', 'json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as {
      scenario: { name: string };
      prediction: { outcome: string; exitCode: number };
    }[];
    expect(
      Object.fromEntries(rows.map((x) => [x.scenario.name, `${x.prediction.outcome}/${x.prediction.exitCode}`])),
    ).toEqual({
      'hook-fits-grace': 'completed/0',
      'short-grace': 'cut/137',
      'restored-grace': 'completed/0',
      'immediate-exit': 'cut/17',
      'no-prestop': 'completed/0',
      'hook-outlasts-grace': 'cut/137',
      'sleep-action': 'completed/0',
      'httpget-hook': 'completed/0',
    });
  });

  it.each([
    [
      'a field of the wrong type',
      'scenarios:\n  - { name: a, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: "30", workMs: 1000, deleteDelayMs: 10 }\n',
      /scenario "a": terminationGracePeriodSeconds \(line 2\): .*number/,
    ],
    [
      'an unknown hook kind',
      'scenarios:\n  - { name: a, mode: graceful, preStop: { kind: tcpSocket }, terminationGracePeriodSeconds: 3, workMs: 1000, deleteDelayMs: 10 }\n',
      /scenario "a": preStop\.kind \(line 2\)/,
    ],
    [
      'a delete after the work ends',
      'scenarios:\n  - { name: a, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 3, workMs: 1000, deleteDelayMs: 2000 }\n',
      /scenario "a": deleteDelayMs \(line 2\): deleteDelayMs must be shorter/,
    ],
    ['broken YAML', 'scenarios: [ {', /not valid YAML/],
    ['an unknown YAML tag', 'scenarios:\n  - !pod { name: a }\n', /not valid YAML: line 2: Unresolved tag: !pod/],
    [
      'duplicate names',
      'scenarios:\n  - { name: a, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 3, workMs: 1000, deleteDelayMs: 10 }\n  - { name: a, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 3, workMs: 1000, deleteDelayMs: 10 }\n',
      /unique/,
    ],
  ])('rejects a scenario file with %s, naming the field (exit 2)', async (_what, text, message) => {
    const file = join(mkdtempSync(join(tmpdir(), 'termlab-sc-')), 'scenarios.yaml');
    writeFileSync(file, text);
    const r = await runCli(['run', '--sim', '--scenarios', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(file);
  });

  it('names unknown --only scenarios', async () => {
    const r = await runCli(['run', '--sim', '--only', 'nope']);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('--only: no scenario named nope') });
  });

  it('exits 3 naming the context and the error when the cluster cannot be reached', async () => {
    const kubeconfig = join(home, 'dead.yaml');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: dead, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: class-cluster, context: {cluster: dead, user: u}}]\ncurrent-context: class-cluster\n',
    );
    const r = await runCli(['run', '--kubeconfig', kubeconfig], noCluster);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/context "class-cluster" at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
    const missing = await runCli(['run', '--context', 'kind-lab'], noCluster);
    expect(missing).toMatchObject({
      code: 3,
      stderr: expect.stringContaining(
        'set KUBECONFIG, pass --kubeconfig FILE, or run on the simulated cluster with --sim',
      ),
    });
  });
});
