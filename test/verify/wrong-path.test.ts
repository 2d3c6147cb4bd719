// A path the app does not serve is bad input, said at once: `termlab verify` on the lab image with
// the default path (/, which it answers 404) used to send a whole --ready-timeout of requests (6003
// at 50/s), then grade them all as cause 4 with exit 1. Now the first second of one 4xx and no 2xx
// ends it before anything is changed: exit 2, naming the path, the status and the Service, in one line said
// alone (it used to follow a whole "❌ fail … cause 4" block and reports, prefixed "USAGE:").
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { runCli } from '../support/cli.ts';

describe('termlab verify with a path the app does not serve', () => {
  it('exits 2 within the first second of answers, naming the path and the status; the Deployment is not changed', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'termlab-verify-path-')), 'out');
    const r = await runCli([
      'verify',
      'deployment/web',
      '--sim',
      '--apply',
      'manifests/verify-example.yaml',
      '--output-dir',
      out,
    ]);
    expect(r.code, r.stderr).toBe(EXIT.badInput);
    expect(r.stderr).toMatch(
      /--path \/: the app answered HTTP 404 to each of the first \d+ requests through Service \S+ and none answered 2xx: give --path a path it serves .*deployment\/web was not changed/,
    );
    // Said alone, in one line and in words, not as an internal code after a verdict: no verdict, no reports.
    const said = r.stderr.split('\n').filter((l) => l.startsWith('termlab'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^termlab verify: --path \/: the app answered HTTP 404 /);
    expect(r.stderr).not.toMatch(/USAGE/);
    expect(r.stdout).not.toMatch(/fail|pass|inconclusive|cause|observation:|reports:/);
    expect(['report.md', 'report.html', 'junit.xml'].filter((f) => existsSync(join(out, f)))).toEqual([]);
    // It stopped before acting: nothing was done to the Deployment and no pod terminated.
    const file = join(out, 'web.verification.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      acted: null,
      timeline: { acted: null, loadSteady: null },
    });
    const offline = await runCli(['grade', file, '-o', 'json']);
    expect(JSON.parse(offline.stdout)).toMatchObject({ terminations: 0 });
    // Offline too, a run that changed nothing gives no pass or fail.
    expect(JSON.parse(offline.stdout)).toMatchObject({ verdict: 'inconclusive' });
  }, 180_000);
});
