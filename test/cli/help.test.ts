// Every flag a subcommand's parser accepts is in its --help: the parsers take their options from the
// Command object's flags (run's, from its own OPTIONS, must list the same), and help is generated from them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpOf, usageOf } from '../../harness/cli/command.ts';
import { createCommands } from '../../harness/cli/commands/index.ts';
import { runFlags } from '../../harness/cli/commands/run.ts';
import { EXIT } from '../../lib/errors.ts';
import { OPTIONS as RUN_PARSER_OPTIONS } from '../../harness/run/command.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const commands = createCommands(() => Promise.reject(new Error('the simulated cluster is not loaded by this test')));
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));

describe('each subcommand is one Command object', () => {
  it('shows every one of its flags, with its help, in --help', () => {
    expect(commands.map((c) => c.name).sort()).toEqual([
      'class',
      'grade',
      'pack',
      'predict',
      'reap',
      'run',
      'scenarios',
      'schema',
      'sim',
      'verify',
    ]);
    for (const command of commands) {
      const help = helpOf(command);
      expect(help).toContain(`usage: ${usageOf(command)}`);
      for (const [name, flag] of Object.entries(command.flags)) {
        expect(help, `${command.name} --${name}`).toMatch(
          new RegExp(`--${name}\\b.*  ${flag.help.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
        );
      }
    }
  });

  it("has run's parser accept exactly the flags its Command object shows", () => {
    expect(Object.keys(RUN_PARSER_OPTIONS).sort()).toEqual(Object.keys(runFlags).sort());
    for (const [name, option] of Object.entries(RUN_PARSER_OPTIONS))
      expect(runFlags[name as keyof typeof runFlags].type, name).toBe(option.type);
  });

  it('has every other parser take its options from its Command object', () => {
    // A parseArgs with options written inline would accept flags that no help shows.
    const parsers = [...sources(join(repoRoot, 'harness')), join(repoRoot, 'cluster/sim/command.ts')].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/parseArgs\(\{[^;]*?options: ([^,)}\s]+)/g)].map(
        (m) => [relative(repoRoot, file), m[1]!] as const,
      ),
    );
    expect(parsers.length).toBeGreaterThanOrEqual(8);
    for (const [file, options] of parsers) {
      const allowed =
        options.startsWith('parseOptions(') ||
        (file === 'harness/run/command.ts' && options === 'OPTIONS') ||
        (file === 'harness/observation/schema-command.ts' && options === '{');
      expect(allowed, `${file}: options ${options}`).toBe(true);
    }
  });

  it('answers termlab sim --help and termlab run --help with the flags they used to hide', async () => {
    const [sim, run] = await Promise.all([runCli(['sim', '--help']), runCli(['run', '--help'])]);
    expect(sim).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--proxy-sync-delay-ms N') });
    expect(run).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--ready-timeout SECONDS') });
    expect(run.stdout).toContain('--sim-proxy-delay MS');
  });
});
