// `termlab verify --sim --apply FILE`: the CLI starts its own simulated cluster (through its one door
// to cluster/sim, as `run --sim` does), creates the file's objects on it, verifies, and stops it.
// Every case is a real CLI process; the flags' mistakes are refused before any cluster starts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-sim-flag-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('termlab verify --sim: its flags', () => {
  it.each([
    [['--sim', '--kubeconfig', 'k'], /--sim starts its own cluster: leave out --context and --kubeconfig/],
    [['--apply', 'manifests/verify-example.yaml'], /--apply: only with --sim/],
    [['--kube-version', '1.36'], /--kube-version: only with --sim/],
    [['--sim'], /--sim starts an empty simulated cluster: give --apply FILE with deployment\/web/],
    [
      ['--sim', '--apply', 'manifests/verify-example.yaml', '--proxy-sync-delay-ms', 'soon'],
      /--proxy-sync-delay-ms: expected a whole number of milliseconds 0-60000, got "soon"/,
    ],
    [['--sim', '--apply', join(dir, 'missing.yaml')], /--apply .*missing\.yaml: cannot read/],
  ])('%j exits 2 naming the mistake', async (args, message) => {
    const r = await runCli(['verify', 'deployment/web', ...args]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
  });

  it('refuses a file without the Deployment, and names the document a field is missing from', async () => {
    const other = file('other.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec: {}\n');
    let r = await runCli(['verify', 'deployment/web', '--sim', '--apply', other]);
    expect(r.stderr).toMatch(/no Deployment web in namespace default to verify \(the file has default\/api\)/);
    expect(r.code).toBe(2);
    const nameless = file(
      'nameless.yaml',
      'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n',
    );
    r = await runCli(['verify', 'deployment/web', '--sim', '--apply', nameless]);
    expect(r.stderr).toMatch(/document 2 \(line 5\): metadata\.name/);
    expect(r.code).toBe(2);
  });

  it('names the object the simulated cluster refused, and exits 2', async () => {
    const refused = file(
      'refused.yaml',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: settings}\nstringData: {a: b}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n',
    );
    const r = await runCli(['verify', 'deployment/web', '--sim', '--apply', refused]);
    expect(r.stderr).toMatch(/document 1 \(line 1\): the simulated cluster refused Secret settings: /);
    expect(r.code).toBe(2);
  }, 60_000);
});

describe('termlab verify --sim --apply manifests/verify-example.yaml', () => {
  it('starts the simulated cluster, makes the example app, and fails its rollout restart with cause 1 and a preStop advice; the file regrades the same', async () => {
    const out = join(dir, 'example');
    const r = await runCli([
      'verify',
      'deployment/web',
      '--sim',
      '--apply',
      'manifests/verify-example.yaml',
      '--path',
      '/work?ms=200',
      '--output-dir',
      out,
      '-o',
      'json',
    ]);
    expect(r.stderr).toMatch(
      /applying 2 object\(s\) from --apply manifests\/verify-example\.yaml to the simulated cluster/,
    );
    expect(r.stdout).toMatch(/on context "termlab-sim" \(.*termlab-sim.*, the simulated cluster\)/);
    const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1)) as {
      verdict: string;
      failed: number;
      byCause: Record<string, number>;
      advice: string[];
      observation: string;
    };
    expect(r.code, r.stderr).toBe(1);
    expect(summary.verdict).toBe('fail');
    expect(summary.byCause['1']).toBeGreaterThan(0);
    expect(summary.advice.join('\n')).toMatch(/preStop: sleep` of at least \d+s/);
    const offline = await runCli(['grade', summary.observation, '-o', 'json']);
    expect(offline.code).toBe(1);
    expect(JSON.parse(offline.stdout)).toMatchObject({
      verdict: 'fail',
      failed: summary.failed,
      byCause: summary.byCause,
    });
  }, 240_000);
});
