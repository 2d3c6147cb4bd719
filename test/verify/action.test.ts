// action.yml, the composite GitHub Action: actionlint reads it through a workflow that uses it
// (clean, and a wrong input refused), and its verify step's own script runs against the simulated
// cluster with the inputs passed the way the runner passes them (env), writing the job summary.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { expectLintsClean, lint, useActionlint } from '../ci/actionlint.ts';
import { repoRoot } from '../support/processes.ts';
import { createApp } from './support.ts';

const action = parse(readFileSync(join(repoRoot, 'action.yml'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'termlab-action-'));

/** A repository holding action.yml and a workflow that uses it with these inputs. */
function workflowUsing(name: string, inputs: Record<string, string>): string {
  const repo = join(scratch, name);
  mkdirSync(join(repo, '.github/workflows'), { recursive: true });
  spawnSync('git', ['init', '-q'], { cwd: repo });
  copyFileSync(join(repoRoot, 'action.yml'), join(repo, 'action.yml'));
  const file = join(repo, '.github/workflows/gate.yml');
  const withLines = Object.entries(inputs)
    .map(([k, v]) => `          ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  writeFileSync(
    file,
    `name: gate\non: [push]\npermissions:\n  contents: read\njobs:\n  verify:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n      - uses: ./\n        with:\n${withLines}\n`,
  );
  return file;
}

describe('action.yml through actionlint', () => {
  const linter = useActionlint();

  it('a workflow using it with every input lints clean', (context) => {
    expectLintsClean(
      context,
      linter.path,
      linter.skipReason,
      workflowUsing('clean', {
        deployment: 'web',
        namespace: 'shop',
        service: 'web',
        port: '80',
        path: '/healthz',
        action: 'rollout-restart',
        'max-failed': '0',
      }),
    );
  });

  it('an input it does not have is refused (actionlint really read it)', (context) => {
    if (!linter.path) context.skip(linter.skipReason);
    const { status, errors } = lint(linter.path!, workflowUsing('broken', { deployment: 'web', 'max-failure': '0' }));
    expect(status).toBe(1);
    expect(errors.some((e) => e.message.includes('"max-failure" is not defined in action "termlab verify"'))).toBe(
      true,
    );
  });
});

describe("action.yml's verify step on the simulated cluster", () => {
  let sim: SimCluster;
  beforeAll(async () => {
    sim = await startSimCluster();
    writeFileSync(join(scratch, 'kubeconfig'), sim.kubeconfig);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    await createApp(kc, 'default', { name: 'web', preStopSleep: 5 });
  }, 120_000);
  afterAll(async () => {
    await sim?.stop();
  });

  it('passes the gate, writes exit-code=0 and the summary', async () => {
    const step = action.runs.steps.find((s: { id?: string }) => s.id === 'verify');
    const given: Record<string, string> = {
      deployment: 'web',
      path: '/work?ms=200',
      kubeconfig: join(scratch, 'kubeconfig'),
      out: join(scratch, 'out'),
    };
    const inputOf = (name: string) => given[name] ?? String(action.inputs[name].default ?? '');
    // The runner's substitution of `${{ inputs.NAME }}` in the step's env, and nowhere else.
    const env = Object.fromEntries(
      Object.entries(step.env as Record<string, string>).map(([k, v]) => [
        k,
        v.replace(/\$\{\{ inputs\.([\w-]+) \}\}/g, (_, n: string) => inputOf(n)),
      ]),
    );
    const output = join(scratch, 'github-output');
    const summary = join(scratch, 'step-summary.md');
    writeFileSync(output, '');
    // Not spawnSync: the simulated cluster runs in this process and must go on answering.
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], {
      cwd: scratch,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...env,
        GITHUB_ACTION_PATH: repoRoot,
        GITHUB_OUTPUT: output,
        GITHUB_STEP_SUMMARY: summary,
      },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c;
    });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const r = { status, stdout: out, stderr: '' };
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(output, 'utf8')).toBe('exit-code=0\n');
    expect(readFileSync(summary, 'utf8')).toMatch(/^## termlab verify: ✅ pass deployment\/web/);
  }, 300_000);
});
