// .github/workflows/lab.yml checked by actionlint (a real workflow linter, built from Go modules),
// and kept in step with the kind pins and the image recipe.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LAB_STAGE } from '../../server/dockerfile.ts';
import { CLUSTER_NAME, CONTEXT, CREATE_WAIT, KIND_CONFIG, KIND_VERSION, KUBECTL_VERSION, LAB_IMAGE_REFERENCE, NAMESPACE, REPO, kindNodeImage } from '../../cluster/kind/versions.ts';

const WORKFLOW = join(REPO, '.github/workflows/lab.yml');
/** .ci/run installs this version here; the test builds it here too when Go is present. */
const ACTIONLINT_VERSION = 'v1.7.12';
const TOOLS_BIN = join(REPO, '.termlab/tools/bin');
/** A cold build of actionlint from the Go module proxy on a busy 2-core machine. */
const GO_INSTALL_TIMEOUT_MS = 10 * 60_000;
const COMMIT_PIN = /^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/;

function runs(program: string, args: string[]): boolean {
  return spawnSync(program, args, { stdio: 'ignore' }).status === 0;
}

function findActionlint(): string | null {
  const cached = join(TOOLS_BIN, 'actionlint');
  if (existsSync(cached) && runs(cached, ['-version'])) return cached;
  return runs('actionlint', ['-version']) ? 'actionlint' : null;
}

function findGo(): string | null {
  for (const go of ['go', '/usr/local/go/bin/go']) if (runs(go, ['version'])) return go;
  return null;
}

let actionlint: string | null = null;
let skipReason = '';

beforeAll(() => {
  actionlint = findActionlint();
  if (actionlint) return;
  const go = findGo();
  if (!go) {
    skipReason = `skipped: actionlint is not installed (.ci/run puts it in .termlab/tools/bin) and there is no Go to build it: the workflow was NOT linted`;
    return;
  }
  mkdirSync(TOOLS_BIN, { recursive: true });
  const install = spawnSync(go, ['install', `github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}`], {
    env: { ...process.env, GOBIN: TOOLS_BIN }, encoding: 'utf8', timeout: GO_INSTALL_TIMEOUT_MS,
  });
  if (install.status !== 0) throw new Error(`go install actionlint failed: ${install.stderr}`);
  actionlint = findActionlint();
}, GO_INSTALL_TIMEOUT_MS);

interface LintError { message: string; line: number; kind: string }

function lint(file: string): { status: number | null; errors: LintError[] } {
  const result = spawnSync(actionlint!, ['-format', '{{json .}}', file], { cwd: REPO, encoding: 'utf8' });
  if (result.error || result.status === null || result.status > 1) throw new Error(`actionlint could not run: ${result.error?.message ?? result.stderr}`);
  return { status: result.status, errors: JSON.parse(result.stdout || '[]') };
}

describe('the lab workflow, linted by actionlint', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'termlab-workflow-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has no actionlint errors', (context) => {
    if (!actionlint) {
      console.warn(`\n*** ${skipReason} ***\n`);
      context.skip(skipReason);
    }
    const { status, errors } = lint(WORKFLOW);
    expect(errors.map((error) => `line ${error.line}: ${error.message} [${error.kind}]`)).toEqual([]);
    expect(status).toBe(0);
  });

  it('is the actionlint version .ci/run builds', () => {
    expect(/^ACTIONLINT_VERSION=(\S+)$/m.exec(readFileSync(join(REPO, '.ci/run'), 'utf8'))?.[1]).toBe(ACTIONLINT_VERSION);
  });

  it('actionlint does reject a broken copy of it', (context) => {
    if (!actionlint) context.skip(skipReason);
    const broken = readFileSync(WORKFLOW, 'utf8')
      .replace('runs-on: ubuntu-24.04', 'runs-on: ubuntu-24.04\n    run-on: ubuntu-24.04')
      .replace('${{ !cancelled() }}', '${{ !cancelled( }}');
    const dir = join(scratch, '.github/workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'lab.yml'), broken);
    const { status, errors } = lint(join(dir, 'lab.yml'));
    expect(status).toBe(1);
    expect(errors.map((error) => error.kind)).toEqual(expect.arrayContaining(['syntax-check', 'expression']));
  });
});

describe('the lab workflow, in step with the pins', () => {
  const workflow = parse(readFileSync(WORKFLOW, 'utf8'));
  const kindJob = workflow.jobs.kind;
  const steps: Record<string, any>[] = kindJob.steps;
  const step = (uses: string) => steps.find((candidate) => String(candidate.uses ?? '').startsWith(`${uses}@`));

  it('runs on push and pull request', () => {
    expect(Object.keys(workflow.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
  });

  it('pins every action by commit', () => {
    const uses = Object.values<any>(workflow.jobs).flatMap((job) => job.steps.map((s: any) => s.uses)).filter(Boolean);
    expect(uses.length).toBeGreaterThan(0);
    for (const action of uses) expect(action).toMatch(COMMIT_PIN);
  });

  it('creates the cluster with the kind release, config and name that kind:up uses', () => {
    expect(step('helm/kind-action')?.with).toEqual({ version: KIND_VERSION, config: KIND_CONFIG, cluster_name: CLUSTER_NAME, wait: CREATE_WAIT, kubectl_version: KUBECTL_VERSION });
    expect(workflow.env).toMatchObject({ CLUSTER: CLUSTER_NAME, IMAGE: LAB_IMAGE_REFERENCE });
    expect(`kind-${workflow.env.CLUSTER}`).toBe(CONTEXT);
    // A Kubernetes where the sleep preStop action is GA (1.34 and later), pinned by digest.
    expect(kindNodeImage()).toMatch(/^kindest\/node:v1\.(3[4-9]|[4-9]\d)\.\d+@sha256:[0-9a-f]{64}$/);
  });

  it('builds the lab stage of the recipe\'s Dockerfile and loads it into the cluster, as kind:up does', () => {
    const runLines = steps.map((s) => String(s.run ?? ''));
    expect(runLines).toContain(`docker build -f server/Dockerfile --target ${LAB_STAGE} -t "$IMAGE" .`);
    expect(runLines).toContain('kind load docker-image "$IMAGE" --name "$CLUSTER"');
  });

  it('runs the lab on that context and namespace, then reports even when the lab failed', () => {
    const lab = steps.find((s) => String(s.run ?? '').includes('termlab run'));
    expect(lab?.run).toContain(`--namespace ${NAMESPACE}`);
    expect(lab?.if).toBeUndefined();
    const after = steps.slice(steps.indexOf(lab!) + 1);
    expect(after.map((s) => s.if)).toEqual(after.map(() => '${{ !cancelled() }}'));
    expect(after.some((s) => String(s.run ?? '').includes('$GITHUB_STEP_SUMMARY'))).toBe(true);
    expect(step('actions/upload-artifact')?.with.path).toBe('${{ env.RUN_DIR }}');
    expect(step('mikepenz/action-junit-report')?.with.report_paths).toBe('${{ env.RUN_DIR }}/junit.xml');
    expect(kindJob.permissions).toMatchObject({ checks: 'write' });
  });

  it('runs npm test on macOS', () => {
    expect(workflow.jobs.macos['runs-on']).toMatch(/^macos-/);
    expect(workflow.jobs.macos.steps.map((s: any) => s.run)).toContain('npm test');
  });
});
