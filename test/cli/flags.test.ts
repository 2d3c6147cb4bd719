import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { flagsOf, nearestFlag, wantsHelp } from '../../harness/cli/flags.ts';
import { runCli } from '../support/cli.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig' };

describe('CLI manners', () => {
  it('suggests the nearest flag for a typo, and nothing for a flag unlike any', () => {
    const flags = flagsOf(
      'termlab grade PATH... [--gradebook FILE.csv] [--gradebook-json FILE] [--html FILE] [--lab FILE]',
    );
    expect(nearestFlag('--gradbook', flags)).toBe('--gradebook');
    expect(nearestFlag('--gradebook-jsn', flags)).toBe('--gradebook-json');
    expect(nearestFlag('--htm', flags)).toBe('--html');
    expect(nearestFlag('--kubeconfig', flags)).toBeNull();
  });

  it('answers --help before a command parses anything, for commands that used to refuse it', async () => {
    // The CLI handles --help for every command in one place; predict and sim each had their own parser.
    const answers = await Promise.all(
      ['predict', 'sim'].map((name) => runCli([name, '--help', '--no-such-flag'], offline)),
    );
    expect(answers[0]).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('usage: termlab predict') });
    expect(answers[1]).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('usage: termlab sim') });
  });

  it('finds --help anywhere before a lone --, and not after it', () => {
    expect(wantsHelp(['x', '-h'])).toBe(true);
    expect(wantsHelp(['--only', 'a', '--help'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
  });

  it("answers an unknown flag in termlab's own one line, naming the nearest valid flag", async () => {
    const r = await runCli(['grade', 'x', '--gradbook', 'g.csv'], offline);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr.split('\n')[0]).toBe('termlab grade: unknown flag --gradbook; did you mean --gradebook?');
    // Node's own text (with its unbalanced quote) never reaches the user.
    expect(r.stderr).not.toContain('To specify a positional argument');
    expect((await runCli(['grade', 'x', '--gradebook'], offline)).stderr.split('\n')[0]).toBe(
      'termlab grade: --gradebook needs a value',
    );
    // A flag with a short form is named by both, without the comma Node quotes between them.
    expect((await runCli(['run', '-n'], offline)).stderr.split('\n')[0]).toBe(
      'termlab run: -n/--namespace needs a value',
    );
  });
});
