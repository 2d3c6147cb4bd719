// A folder whose only entries are symbolic-link loops (issue 41): `termlab grade` ends on its own, exit 2,
// one line per entry naming it. A grader that followed any of them would never end: the test's own signal
// then kills it, and the process's end on its own (its exit code, not a kill) is the proof, never a time.
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig', HOME: mkdtempSync(join(tmpdir(), 'termlab-home-')) };

describe('termlab grade on a folder of link loops', () => {
  it('ends, exit 2, naming each entry once', async ({ signal }) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'termlab-link-loops-')));
    const dir = join(root, 'hand-in');
    mkdirSync(dir);
    symlinkSync('self.observation.json', join(dir, 'self.observation.json'));
    symlinkSync('..', join(dir, 'parent.observation.json'));
    symlinkSync('.', join(dir, 'here.observation.json'));
    symlinkSync('b.observation.json', join(dir, 'a.observation.json'));
    symlinkSync('a.observation.json', join(dir, 'b.observation.json'));
    mkdirSync(join(dir, 'folder.observation.json'));
    symlinkSync('..', join(dir, 'up'));
    const r = await runCli(['grade', dir], offline, signal);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      `termlab grade: ${join(dir, 'a.observation.json')}: a symbolic link loop: nothing to read`,
      `termlab grade: ${join(dir, 'b.observation.json')}: a symbolic link loop: nothing to read`,
      `termlab grade: ${join(dir, 'folder.observation.json')}: a folder, not a file: nothing to read`,
      `termlab grade: ${join(dir, 'here.observation.json')}: a symbolic link back to ${dir}, a folder it is in (a loop): not followed`,
      `termlab grade: ${join(dir, 'parent.observation.json')}: a symbolic link back to ${root}, a folder it is in (a loop): not followed`,
      `termlab grade: ${join(dir, 'self.observation.json')}: a symbolic link loop: nothing to read`,
      `termlab grade: ${join(dir, 'up')}: a symbolic link back to ${root}, a folder it is in (a loop): not followed`,
    ]);
    expect(r.stdout).toBe('0 graded, 0 passed every check, 0 evidence invalid, 0 inconclusive, 7 unreadable\n');
  });
});
