// actionlint (a real workflow linter, built from Go modules) for the workflow tests: the copy .ci/run
// builds into .termlab/tools/bin, one on PATH, or one built here when Go is present.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect } from 'vitest';
import { REPO } from '../../dev/kind/versions.ts';

/** .ci/run installs this version here; the tests build it here too when Go is present. */
export const ACTIONLINT_VERSION = 'v1.7.12';
const TOOLS_BIN = join(REPO, '.termlab/tools/bin');
/** A cold build of actionlint from the Go module proxy on a busy 2-core machine. */
export const GO_INSTALL_TIMEOUT_MS = 10 * 60_000;
/** owner/name[/path]@<40 hex>: an action pinned by commit. */
export const COMMIT_PIN = /^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/;

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

/** The linter's path, or why there is none (the caller skips, loudly). */
export function ensureActionlint(): { path: string } | { skipReason: string } {
  const found = findActionlint();
  if (found) return { path: found };
  const go = findGo();
  if (!go)
    return {
      skipReason:
        'skipped: actionlint is not installed (.ci/run puts it in .termlab/tools/bin) and there is no Go to build it: the workflow was NOT linted',
    };
  mkdirSync(TOOLS_BIN, { recursive: true });
  const install = spawnSync(go, ['install', `github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}`], {
    env: { ...process.env, GOBIN: TOOLS_BIN },
    encoding: 'utf8',
    timeout: GO_INSTALL_TIMEOUT_MS,
  });
  if (install.status !== 0) throw new Error(`go install actionlint failed: ${install.stderr}`);
  const built = findActionlint();
  if (!built) throw new Error(`go install actionlint succeeded but ${TOOLS_BIN}/actionlint does not run`);
  return { path: built };
}

export interface LintError {
  message: string;
  line: number;
  kind: string;
}

export function lint(actionlint: string, file: string): { status: number | null; errors: LintError[] } {
  const result = spawnSync(actionlint, ['-format', '{{json .}}', file], { cwd: REPO, encoding: 'utf8' });
  if (result.error || result.status === null || result.status > 1)
    throw new Error(`actionlint could not run: ${result.error?.message ?? result.stderr}`);
  return { status: result.status, errors: JSON.parse(result.stdout || '[]') };
}

export const describeErrors = (errors: LintError[]) =>
  errors.map((error) => `line ${error.line}: ${error.message} [${error.kind}]`);

/** A workflow with no actionlint errors; the test is skipped, loudly, where actionlint cannot be had. */
export function expectLintsClean(
  context: { skip(note?: string): void },
  actionlint: string | null,
  skipReason: string,
  file: string,
): void {
  if (!actionlint) {
    console.warn(`\n*** ${skipReason} ***\n`);
    context.skip(skipReason);
    return;
  }
  const { status, errors } = lint(actionlint, file);
  expect(describeErrors(errors)).toEqual([]);
  expect(status).toBe(0);
}

/** Every `uses:` of a parsed workflow. */
export function actionsUsed(workflow: { jobs: Record<string, { steps: { uses?: string }[] }> }): string[] {
  return Object.values(workflow.jobs)
    .flatMap((job) => job.steps.map((s) => s.uses))
    .filter((uses): uses is string => Boolean(uses));
}

/** actionlint for one test file, found (or built) once before its tests; a test without it skips with the reason. */
export function useActionlint(): { path: string | null; skipReason: string } {
  const linter = { path: null as string | null, skipReason: '' };
  beforeAll(() => {
    const found = ensureActionlint();
    if ('path' in found) linter.path = found.path;
    else linter.skipReason = found.skipReason;
  }, GO_INSTALL_TIMEOUT_MS);
  return linter;
}
