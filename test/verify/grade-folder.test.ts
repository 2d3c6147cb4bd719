// `termlab grade DIR` on the folder `termlab verify` wrote (issue 41): its *.verification.json graded as
// each is when named alone, as a folder of observations is graded; what cannot be read is one line, exit 2.
import { copyFileSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig', HOME: mkdtempSync(join(tmpdir(), 'termlab-home-')) };
const FIXTURE = join(repoRoot, 'test/verify/fixtures/rollout-no-prestop.verification.json');

/** A folder as `termlab verify` leaves it: the verification file and its reports beside it. */
function verifyFolder(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'termlab-verify-out-')));
  copyFileSync(FIXTURE, join(dir, 'web.verification.json'));
  for (const name of ['report.md', 'report.html', 'junit.xml']) writeFileSync(join(dir, name), 'a report\n');
  return dir;
}

describe('termlab grade on a termlab verify folder', () => {
  it('grades the verification file in it as when it is named', async ({ signal }) => {
    const dir = verifyFolder();
    const alone = await runCli(['grade', join(dir, 'web.verification.json')], offline, signal);
    expect(alone.stdout).toContain('rollout-restart');
    const folder = await runCli(['grade', dir], offline, signal);
    expect(folder).toEqual(alone);
  });

  it('grades each of several, and names what cannot be read, exit 2', async ({ signal }) => {
    const dir = verifyFolder();
    copyFileSync(FIXTURE, join(dir, 'api.verification.json'));
    symlinkSync('.', join(dir, 'loop.verification.json'));
    const alone = await runCli(['grade', join(dir, 'web.verification.json')], offline, signal);
    const r = await runCli(['grade', dir], offline, signal);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(alone.stdout.repeat(2));
    expect(r.stderr).toBe(
      `termlab grade: ${join(dir, 'loop.verification.json')}: a symbolic link back to ${dir}, a folder it is in (a loop): not followed\n`,
    );
  });
});
