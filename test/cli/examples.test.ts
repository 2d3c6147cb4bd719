// Every help page's examples are real command lines: each one's flags go through its command's own parser,
// with no old spelling and no unknown flag, and every file of the project it names exists. None can rot.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommands } from '../../harness/cli/commands/index.ts';
import { repoRoot } from '../support/processes.ts';

const commands = createCommands(() => Promise.reject(new Error('the simulated cluster is not loaded by this test')));

/** A command line's words as a shell splits them: quotes removed, a redirection and what follows dropped. */
function words(line: string): string[] {
  const out = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const redirect = out.findIndex((w) => w === '>' || w === '|');
  return redirect === -1 ? out : out.slice(0, redirect);
}

describe('help examples', () => {
  it('gives every command at least one example', () => {
    for (const command of commands) expect(command.examples.length, command.name).toBeGreaterThan(0);
  });

  for (const command of commands)
    for (const example of command.examples)
      it(`parses ${example.line}`, () => {
        const [termlab, name, ...argv] = words(example.line);
        expect([termlab, name]).toEqual(['termlab', command.name]);
        const warnings: string[] = [];
        expect(() => command.parse(argv, { err: (t) => warnings.push(t) })).not.toThrow();
        expect(warnings, 'an example uses the new spellings').toEqual([]);
        for (const file of argv.filter((w) => w.startsWith('manifests/')))
          expect(existsSync(join(repoRoot, file)), file).toBe(true);
      });
});
