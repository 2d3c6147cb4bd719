// kubectl's conventions, through the real CLI: -n, -o as a format, long names for files and folders, the old
// spellings still working with one deprecation line, `termlab version`.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { KNOWN_MINORS } from '../../harness/grade/theory.ts';
import { EXIT } from '../../lib/errors.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import { runCli } from '../support/cli.ts';
import { exampleObservations } from '../support/observations.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig', HOME: mkdtempSync(join(tmpdir(), 'termlab-home-')) };
const deprecations = (stderr: string) => stderr.split('\n').filter((l) => l.includes('is deprecated'));

describe.concurrent('kubectl conventions', () => {
  it('takes -n as --namespace: run --sim -n gets as far as its scenarios', async () => {
    const r = await runCli(['run', '--sim', '-n', 'lab', '--only', 'nope'], offline);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain('--only: no scenario named nope');
  });

  it('writes the predictions file named by --output-file, --out or -o PATH, a deprecation line for each old one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-spellings-'));
    const spellings = [['--output-file'], ['--out'], ['-o']];
    const results = await Promise.all(
      spellings.map(([flag], i) =>
        runCli(['predict', '--template', '--only', 'short-grace', flag!, join(dir, `p${i}.yaml`)], offline),
      ),
    );
    for (const [i, r] of results.entries()) {
      expect(r.code, r.stderr).toBe(EXIT.ok);
      expect(readFileSync(join(dir, `p${i}.yaml`), 'utf8')).toContain('short-grace');
    }
    expect(deprecations(results[0]!.stderr)).toEqual([]);
    expect(deprecations(results[1]!.stderr)).toEqual([
      'termlab predict: --out is deprecated: use --output-file (the old spelling still works in this release)',
    ]);
    expect(deprecations(results[2]!.stderr)).toEqual([
      'termlab predict: -o FILE is deprecated: use --output-file FILE (-o is an output format, as in kubectl; the old meaning still works in this release)',
    ]);
  });

  it('refuses -o json where -o named a file, writing nothing', async () => {
    const r = await runCli(['predict', '--template', '-o', 'json'], offline);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain('-o json: -o is an output format, as in kubectl, and this command has none');
  });

  it('prints the grades with -o json or -o yaml, the same data, and --json still works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-formats-'));
    for (const [name, o] of Object.entries(exampleObservations()))
      writeFileSync(join(dir, `${name}.observation.json`), JSON.stringify(o));
    const [json, yaml, old] = await Promise.all([
      runCli(['grade', dir, '-o', 'json'], offline),
      runCli(['grade', dir, '--output=yaml'], offline),
      runCli(['grade', dir, '--json'], offline),
    ]);
    expect(JSON.parse(json.stdout).results).toHaveLength(6);
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    expect(old.stdout).toBe(json.stdout);
    expect(deprecations(old.stderr)).toEqual([
      'termlab grade: --json is deprecated: use -o json (the old spelling still works in this release)',
    ]);
  });

  it('checks --proxy-sync-delay-ms alike in run and sim, under either name', async () => {
    const [tooLate, old] = await Promise.all([
      runCli(['run', '--sim', '--proxy-sync-delay-ms', '70000'], offline),
      runCli(['run', '--sim-proxy-delay', '5'], offline),
    ]);
    expect(tooLate.code).toBe(EXIT.badInput);
    expect(tooLate.stderr).toContain(
      'termlab run: --proxy-sync-delay-ms: expected a whole number of milliseconds 0-60000, got "70000"',
    );
    expect(old.code).toBe(EXIT.badInput);
    expect(old.stderr).toContain('--sim-proxy-delay is deprecated: use --proxy-sync-delay-ms');
    expect(old.stderr).toContain('termlab run: --proxy-sync-delay-ms: only with --sim');
  });

  it("prints termlab's version and the Kubernetes minors the grader knows", async () => {
    const [text, json, bare] = await Promise.all([
      runCli(['version'], offline),
      runCli(['version', '-o', 'json'], offline),
      runCli(['--version'], offline),
    ]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain(`termlab ${HARNESS_VERSION}\n`);
    expect(text.stdout).toContain(`knows Kubernetes ${KNOWN_MINORS.join(', ')}`);
    for (const line of text.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(JSON.parse(json.stdout)).toEqual({
      termlab: HARNESS_VERSION,
      kubernetesMinors: KNOWN_MINORS,
      newestMinor: KNOWN_MINORS.at(-1),
    });
    // --version stays the number alone, for scripts.
    expect(bare.stdout).toBe(`${HARNESS_VERSION}\n`);
  });
});
