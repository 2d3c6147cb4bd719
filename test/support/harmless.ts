// The fields docs/grading.md lists under "Changes that do not change a verdict", as patterns:
// the property tests hold every other field's change to a verdict other than "matches the model".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './processes.ts';

/** `N` is any index, `*` anything (including more fields); the rest is literal. */
const fieldPattern = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('.')
      .map((part) => (part === 'N' ? '\\d+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('\\.')}$`,
  );

/** The field patterns of the "Changes that do not change a verdict" table, as regular expressions. */
export function harmlessPatterns(): RegExp[] {
  const doc = readFileSync(join(repoRoot, 'docs', 'grading.md'), 'utf8');
  const section = doc.split('## Changes that do not change a verdict')[1]!.split('\n## ')[0]!;
  const patterns: RegExp[] = [];
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const firstCell = row.split(' | ')[0]!;
    for (const [, pattern] of firstCell.matchAll(/`([^`]+)`/g)) patterns.push(fieldPattern(pattern!));
  }
  return patterns;
}
