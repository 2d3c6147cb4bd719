// kubectl's habits with old command lines kept working for a release: each old spelling is rewritten to its
// new one with one deprecation line, and `-o` is an output format wherever a command has formats.
import { describe, expect, it } from 'vitest';
import { createCommands } from '../../harness/cli/commands/index.ts';
import { newSpellings } from '../../harness/cli/old-spellings.ts';
import { gradeFlags } from '../../harness/grade/flags.ts';
import { packFlags } from '../../harness/pack/flags.ts';
import { runFlags } from '../../harness/run/flags.ts';
import { isTermlabError } from '../../lib/errors.ts';

const commands = createCommands(() => Promise.reject(new Error('the simulated cluster is not loaded by this test')));
const command = (name: string) => commands.find((c) => c.name === name)!;

function rewrite(flags: Parameters<typeof newSpellings>[0], argv: string[]) {
  const warnings: string[] = [];
  return { argv: newSpellings(flags, argv, (line) => warnings.push(line)), warnings };
}

describe('old spellings', () => {
  it('rewrites --out to --output-dir, in both forms, with one line naming the new spelling', () => {
    expect(rewrite(runFlags, ['--sim', '--out', 'a', '--out=b'])).toEqual({
      argv: ['--sim', '--output-dir', 'a', '--output-dir=b'],
      warnings: ['--out is deprecated: use --output-dir (the old spelling still works in this release)'],
    });
  });

  it("takes a string flag's value as it is, even one spelled like an old flag", () => {
    expect(rewrite(runFlags, ['--only', '--out', '--', '--out']).argv).toEqual(['--only', '--out', '--', '--out']);
  });

  it('gives one setting one name: run --sim-proxy-delay is --proxy-sync-delay-ms, as termlab sim calls it', () => {
    const { values } = command('run').parse(['--sim', '--sim-proxy-delay', '250'], { err: () => {} });
    expect(values['proxy-sync-delay-ms']).toBe('250');
    expect(command('sim').flags).toHaveProperty('proxy-sync-delay-ms');
    expect(command('verify').flags).toHaveProperty('proxy-sync-delay-ms');
  });

  it('keeps -o FILE where -o named a file and the command has no format, refusing a format name', () => {
    expect(rewrite(packFlags, ['-o', 'alice', '-ob.tgz'])).toEqual({
      argv: ['--output-file', 'alice', '--output-file', 'b.tgz'],
      warnings: [
        '-o FILE is deprecated: use --output-file FILE (-o is an output format, as in kubectl; the old meaning still works in this release)',
      ],
    });
    const refused = (() => {
      try {
        rewrite(packFlags, ['-o', 'json']);
      } catch (error) {
        return error;
      }
    })();
    expect(isTermlabError(refused) && refused.code === 'USAGE' && refused.message).toBe(
      '-o json: -o is an output format, as in kubectl, and this command has none; a file is --output-file FILE',
    );
  });

  it('makes -o a format where the command has formats, a clear path still its old file meaning', () => {
    const flags = {
      ...gradeFlags,
      report: { type: 'string', value: 'FILE', help: 'a file', deprecated: ['-o'] },
    } as const;
    expect(rewrite(flags, ['-o', 'json']).argv).toEqual(['-o', 'json']);
    expect(rewrite(flags, ['-o', 'out/r.md']).argv).toEqual(['--report', 'out/r.md']);
    expect(rewrite(flags, ['-o', 'r.md']).argv).toEqual(['--report', 'r.md']);
  });

  it('reads --json as -o json, and refuses a value given to it', () => {
    expect(rewrite(gradeFlags, ['x', '--json'])).toEqual({
      argv: ['x', '--output=json'],
      warnings: ['--json is deprecated: use -o json (the old spelling still works in this release)'],
    });
    expect(() => rewrite(gradeFlags, ['--json=yes'])).toThrow('--json takes no value');
  });

  it("takes kubectl's -o=json and -n=lab as -o json and -n lab", () => {
    expect(command('grade').parse(['x', '-o=json'], { err: () => {} }).values.output).toBe('json');
    expect(command('run').parse(['-n=lab'], { err: () => {} }).values.namespace).toBe('lab');
  });

  it('refuses an output format it does not print, naming the ones it does', () => {
    expect(() => command('grade').parse(['x', '-o', 'xml'], { err: () => {} })).toThrow(
      '-o/--output: "xml" is not one of text, json, yaml',
    );
  });

  it('accepts -n for --namespace wherever a namespace flag exists', () => {
    const withNamespace = commands.filter((c) => 'namespace' in c.flags);
    expect(withNamespace.map((c) => c.name).sort()).toEqual(['class', 'grade', 'reap', 'run', 'verify']);
    const argv: Record<string, string[]> = {
      class: ['student', 'alice', '-n', 'lab'],
      verify: ['deployment/web', '-n', 'lab'],
      grade: ['handins/', '--witness', '-n', 'lab'],
    };
    for (const c of withNamespace)
      expect(c.parse(argv[c.name] ?? ['-n', 'lab'], { err: () => {} }).values.namespace, c.name).toBe('lab');
  });
});
