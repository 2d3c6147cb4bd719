// Every flag a subcommand's parser accepts is in its --help: the parsers take their options from the
// Command object's flags (the feature's own table, harness/X/flags.ts), and help is generated from them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpOf, usageOf } from '../../harness/cli/command.ts';
import { createCommands } from '../../harness/cli/commands/index.ts';
import { EXIT } from '../../lib/errors.ts';
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

  it("has every parser, the CLI's alone, take its options from the flags its Command object shows", () => {
    // A parseArgs with options written inline would accept flags that no help shows (run's once had its own
    // list); a feature or the simulator that parsed a command line would have to know the CLI's table again.
    const parsers = [...sources(join(repoRoot, 'harness')), ...sources(join(repoRoot, 'cluster/sim'))].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/parseArgs\(\{[^;]*?options: ([^,)}\s]+)/g)].map(
        (m) => [relative(repoRoot, file), m[1]!] as const,
      ),
    );
    expect(parsers.length).toBeGreaterThanOrEqual(8);
    for (const [file, options] of parsers) {
      expect(file, 'a command line is parsed by its Command object').toMatch(/^harness\/cli\/commands\/[a-z]+\.ts$/);
      const shown = readFileSync(join(repoRoot, file), 'utf8').match(/\bflags: (\w+),/)?.[1];
      expect(options, `${file}: options ${options}, flags ${shown}`).toMatch(
        new RegExp(`^parseOptions\\((pickFlags\\()?${shown}$`),
      );
    }
    expect(parsers.map(([file]) => file)).toContain('harness/cli/commands/run.ts');
  });

  it('answers termlab sim --help and termlab run --help with the flags they used to hide', async () => {
    const [sim, run] = await Promise.all([runCli(['sim', '--help']), runCli(['run', '--help'])]);
    expect(sim).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--proxy-sync-delay-ms N') });
    expect(run).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--ready-timeout SECONDS') });
    expect(run.stdout).toContain('--sim-proxy-delay MS');
  });
});
