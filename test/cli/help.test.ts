// Every flag a subcommand's parser accepts is in its --help: the parsers take their options from the
// Command object's flags (the feature's own table, harness/X/flags.ts), and help is generated from them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP_WIDTH, helpOf, usageOf } from '../../harness/cli/command.ts';
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
      'version',
    ]);
    for (const command of commands) {
      const help = helpOf(command);
      expect(help).toContain(`usage: ${usageOf(command)}`);
      // A long help is wrapped: its words are there in order, the line breaks aside.
      const flat = help.replace(/\s+/g, ' ');
      for (const [name, flag] of Object.entries(command.flags)) {
        expect(flat, `${command.name} --${name}`).toMatch(
          new RegExp(`--${name}\\b.*? ${flag.help.replace(/\s+/g, ' ').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
        );
      }
    }
  });

  it('fits every help page and the command list in 100 columns', async () => {
    const pages = [
      ...commands.map((c) => [c.name, helpOf(c)] as const),
      ['termlab', (await runCli([])).stdout] as const,
    ];
    expect(pages.at(-1)![1]).toContain('commands:');
    for (const [name, page] of pages)
      for (const line of page.split('\n')) expect(line.length, `${name}: ${line}`).toBeLessThanOrEqual(HELP_WIDTH);
  });

  it("has every parser, the CLI's alone, take its options from the flags its Command object shows", () => {
    // A parseArgs with options written inline would accept flags that no help shows (run's once had its own
    // list); a feature or the simulator that parsed a command line would have to know the CLI's table again.
    const parsers = [...sources(join(repoRoot, 'harness')), ...sources(join(repoRoot, 'cluster/sim'))].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/parseArgs\(\{[^;]*?options: ([^,)}\s]+)/g)].map(
        (m) => [relative(repoRoot, file), m[1]!] as const,
      ),
    );
    // One parseArgs, parseFlags's, with the table it is given; each command hands it the table it shows.
    expect(parsers).toEqual([['harness/cli/command.ts', 'parseOptions(flags']]);
    const callers = sources(join(repoRoot, 'harness/cli/commands')).filter((f) => !f.endsWith('index.ts'));
    expect(callers.length).toBeGreaterThanOrEqual(11);
    for (const file of callers) {
      const text = readFileSync(file, 'utf8');
      const shown = text.match(/\bflags: (\w+),/)?.[1];
      const parsed = [...text.matchAll(/parseFlags\('[a-z]+', ([^,]+),/g)].map((m) => m[1]);
      expect(parsed.length, relative(repoRoot, file)).toBeGreaterThan(0);
      for (const options of parsed)
        expect(options, `${relative(repoRoot, file)}: parses ${options}, shows ${shown}`).toMatch(
          new RegExp(`^(pickFlags\\()?${shown}$`),
        );
    }
  });

  it('answers termlab sim --help and termlab run --help with the flags they used to hide', async () => {
    const [sim, run] = await Promise.all([runCli(['sim', '--help']), runCli(['run', '--help'])]);
    expect(sim).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--proxy-sync-delay-ms MS') });
    expect(run).toMatchObject({ code: EXIT.ok, stdout: expect.stringContaining('--ready-timeout SECONDS') });
    expect(run.stdout).toContain('--proxy-sync-delay-ms MS');
    expect(run.stdout).toContain('--sim-proxy-delay MS: now --proxy-sync-delay-ms MS');
  });

  it('says which Kubernetes minors the simulated cluster emulates in plain words', () => {
    for (const name of ['run', 'sim', 'verify']) {
      const help = helpOf(commands.find((c) => c.name === name)!).replace(/\s+/g, ' ');
      expect(help).toContain(
        '1.35, 1.36, 1.37 (the default) or 1.38 (v1.38.0-beta.0); 1.34 also works, for old recordings',
      );
      expect(help).not.toContain('kept)');
    }
  });
});
