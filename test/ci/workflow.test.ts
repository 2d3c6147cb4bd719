// .github/workflows/lab.yml checked by actionlint and kept in step with the kind pins, the image
// recipe and the supported Node.js lines.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LAB_STAGE } from '../../server/dockerfile.ts';
import {
  CLUSTER_NAME,
  CONTEXT,
  CREATE_WAIT,
  DEFAULT_KUBE_MINOR,
  KIND_CONFIG,
  KIND_NODE_IMAGES,
  KIND_VERSION,
  LAB_IMAGE_REFERENCE,
  NAMESPACE,
  REPO,
  kindNodeImage,
  nodeImageVersion,
} from '../../dev/kind/versions.ts';
import { ACTIONLINT_VERSION, actionsUsed, COMMIT_PIN, expectLintsClean, lint, useActionlint } from './actionlint.ts';

const WORKFLOW = join(REPO, '.github/workflows/lab.yml');
/** The Node.js lines termlab supports (README, package.json engines): npm test runs on each. */
const NODE_LINES = [22, 24, 26];
/** The line every other job runs on. */
const JOB_NODE = 24;

const linter = useActionlint();

describe('the lab workflow, linted by actionlint', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'termlab-workflow-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has no actionlint errors', (context) => expectLintsClean(context, linter.path, linter.skipReason, WORKFLOW));

  it('is the actionlint version .ci/run builds', () => {
    expect(/^ACTIONLINT_VERSION=(\S+)$/m.exec(readFileSync(join(REPO, '.ci/run'), 'utf8'))?.[1]).toBe(
      ACTIONLINT_VERSION,
    );
  });

  it('actionlint does reject a broken copy of it', (context) => {
    if (!linter.path) context.skip(linter.skipReason);
    const broken = readFileSync(WORKFLOW, 'utf8')
      .replace('runs-on: ubuntu-24.04', 'runs-on: ubuntu-24.04\n    run-on: ubuntu-24.04')
      .replace('${{ !cancelled() }}', '${{ !cancelled( }}')
      .replace('node-version: ${{ matrix.node }}', 'node-version: ${{ matrix.nodes }}');
    const dir = join(scratch, '.github/workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'lab.yml'), broken);
    const { status, errors } = lint(linter.path!, join(dir, 'lab.yml'));
    expect(status).toBe(1);
    expect(errors.map((error) => error.kind)).toEqual(expect.arrayContaining(['syntax-check', 'expression']));
    expect(errors.some((error) => error.message.includes('nodes'))).toBe(true);
  });
});

describe('the lab workflow, in step with the pins', () => {
  const workflow = parse(readFileSync(WORKFLOW, 'utf8'));
  const kindJob = workflow.jobs.kind;
  const steps: Record<string, any>[] = kindJob.steps;
  const step = (uses: string, from = steps) =>
    from.find((candidate) => String(candidate.uses ?? '').startsWith(`${uses}@`));

  it('runs on push and pull request', () => {
    expect(Object.keys(workflow.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
  });

  it('pins every action by commit, with its version in a comment', () => {
    const uses = actionsUsed(workflow);
    expect(uses.length).toBeGreaterThan(0);
    for (const action of uses) expect(action).toMatch(COMMIT_PIN);
    const text = readFileSync(WORKFLOW, 'utf8');
    for (const action of uses)
      expect(text, action).toMatch(
        new RegExp(`uses: ${action.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} # v\\d+\\.\\d+\\.\\d+\\n`),
      );
  });

  it("runs the lab on each of kind v0.33.0's node images for the supported minors, with kubectl of that version", () => {
    const matrix: { kube: string; node_image: string; kubectl: string }[] = kindJob.strategy.matrix.include;
    expect(Object.fromEntries(matrix.map((entry) => [entry.kube, entry.node_image]))).toEqual(KIND_NODE_IMAGES);
    for (const entry of matrix) expect(entry.kubectl).toBe(nodeImageVersion(entry.node_image));
    expect(kindJob.strategy['fail-fast']).toBe(false);
    expect(kindJob.name).toContain('${{ matrix.kube }}');
  });

  it('creates the cluster with the kind release, config and name that kind:up uses', () => {
    expect(step('helm/kind-action')?.with).toEqual({
      version: KIND_VERSION,
      config: KIND_CONFIG,
      node_image: '${{ matrix.node_image }}',
      cluster_name: CLUSTER_NAME,
      wait: CREATE_WAIT,
      kubectl_version: '${{ matrix.kubectl }}',
    });
    expect(workflow.env).toMatchObject({ CLUSTER: CLUSTER_NAME, IMAGE: LAB_IMAGE_REFERENCE });
    expect(`kind-${workflow.env.CLUSTER}`).toBe(CONTEXT);
    // The config's own image is kind v0.33.0's default, the one kind:up uses without --kube.
    expect(kindNodeImage()).toBe(KIND_NODE_IMAGES[DEFAULT_KUBE_MINOR]);
  });

  it("builds the lab stage of the recipe's Dockerfile and loads it into the cluster, as kind:up does", () => {
    const runLines = steps.map((s) => String(s.run ?? ''));
    expect(runLines).toContain(`docker build -f server/Dockerfile --target ${LAB_STAGE} -t "$IMAGE" .`);
    expect(runLines).toContain('kind load docker-image "$IMAGE" --name "$CLUSTER"');
  });

  it('runs the lab on that context and namespace, then reports each minor apart even when the lab failed', () => {
    const lab = steps.find((s) => String(s.run ?? '').includes('termlab run'));
    expect(lab?.run).toContain(`--namespace ${NAMESPACE}`);
    expect(lab?.if).toBeUndefined();
    const after = steps.slice(steps.indexOf(lab!) + 1);
    expect(after.map((s) => s.if)).toEqual(after.map(() => '${{ !cancelled() }}'));
    expect(after.some((s) => String(s.run ?? '').includes('$GITHUB_STEP_SUMMARY'))).toBe(true);
    expect(step('actions/upload-artifact')?.with).toMatchObject({
      name: 'termlab-run-${{ matrix.kube }}',
      path: '${{ env.RUN_DIR }}',
    });
    expect(step('mikepenz/action-junit-report')?.with).toMatchObject({
      report_paths: '${{ env.RUN_DIR }}/junit.xml',
      check_name: expect.stringContaining('${{ matrix.kube }}'),
    });
    expect(kindJob.permissions).toMatchObject({ checks: 'write' });
  });

  it('runs npm test on each supported Node.js line, and every other job on Node.js 24', () => {
    const test = workflow.jobs.test;
    expect(test.strategy.matrix.node).toEqual(NODE_LINES);
    expect(step('actions/setup-node', test.steps)?.with['node-version']).toBe('${{ matrix.node }}');
    expect(test.steps.map((s: any) => s.run)).toContain('npm test');
    for (const name of Object.keys(workflow.jobs).filter((job) => job !== 'test')) {
      expect(step('actions/setup-node', workflow.jobs[name].steps)?.with['node-version'], name).toBe(JOB_NODE);
    }
  });

  it('names the supported Node.js lines in package.json engines', () => {
    const engines: string = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).engines.node;
    for (const line of NODE_LINES) expect(engines).toMatch(new RegExp(`\\^${line}\\.`));
  });

  it('runs npm test on macOS', () => {
    expect(workflow.jobs.macos['runs-on']).toMatch(/^macos-/);
    expect(workflow.jobs.macos.steps.map((s: any) => s.run)).toContain('npm test');
  });
});
