// What the docs, the scripts and CI tell a user to type uses today's spellings: no command line in them
// would print a deprecation line (the old spellings stay for a release, but nobody should learn them now).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommands } from '../../harness/cli/commands/index.ts';
import { repoRoot } from '../support/processes.ts';

const commands = createCommands(() => Promise.reject(new Error('the simulated cluster is not loaded by this test')));
const FILES = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'package.json',
  'action.yml',
  ...readdirSync(join(repoRoot, '.github/workflows')).map((f) => `.github/workflows/${f}`),
];

/** Every `termlab COMMAND ...` in a file, up to the end of its code span, line or shell comment. */
function commandLines(text: string): string[] {
  return [...text.matchAll(/\btermlab(?:\.js)? ([a-z]+)\b([^`\n#"|;)]*)/g)].map((m) => `${m[1]}${m[2]}`);
}

describe('the docs, scripts and CI', () => {
  it('type no old spelling of a flag', () => {
    const found: string[] = [];
    let checked = 0;
    for (const file of FILES)
      for (const line of commandLines(readFileSync(join(repoRoot, file), 'utf8'))) {
        const [name, ...argv] = line.trim().split(/\s+/);
        const command = commands.find((c) => c.name === name);
        if (!command) continue;
        checked++;
        const warnings: string[] = [];
        try {
          command.parse(argv, { err: (t) => warnings.push(t) });
        } catch {
          // A line with placeholders ([--hours 24], PATH...) need not parse: only its spellings are checked.
        }
        if (warnings.length) found.push(`${file}: termlab ${line.trim()}: ${warnings.join('')}`);
      }
    expect(checked).toBeGreaterThan(50);
    expect(found).toEqual([]);
  });
});
