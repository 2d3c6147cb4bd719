// The commands of a path through the guides, read from the docs themselves: each ```sh block marked by an HTML
// comment `<!-- guide:PATH ... -->` on the line before it, in document order, so the test follows what a reader
// is told to type and a changed command (a flag renamed) changes what the test runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GuideBlock {
  /** Where the block is, for messages: `docs/student-guide.md:42`. */
  where: string;
  /** `<!-- guide:student instead of the block before -->`: an alternative, run from where the block before began. */
  instead: boolean;
  /** Its command lines as typed: a trailing `# comment` dropped, blank lines left out. */
  lines: string[];
}

const FENCE = /^ *```sh\n([\s\S]*?)^ *```/gm;

/** The blocks of `path` in `file` (relative to `root`), in order. */
export function guideBlocks(root: string, file: string, path: 'student' | 'instructor'): GuideBlock[] {
  const text = readFileSync(join(root, file), 'utf8');
  // A marker that marks nothing (a blank line or prose before the fence) would leave its block unfollowed.
  const lines = text.split('\n');
  for (const [i, line] of lines.entries())
    if (line.startsWith('<!-- guide:') && !/^ *```sh$/.test(lines[i + 1] ?? ''))
      throw new Error(`${file}:${i + 1}: a guide marker must be the line right before a \`\`\`sh block`);
  const blocks: GuideBlock[] = [];
  for (const m of text.matchAll(FENCE)) {
    const before = text.slice(0, m.index).split('\n');
    const marker = before.at(-2)?.match(/^<!-- guide:(\w+)(.*)-->$/);
    if (marker?.[1] !== path) continue;
    blocks.push({
      where: `${file}:${before.length}`,
      instead: marker[2]!.includes('instead of the block before'),
      lines: m[1]!
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter(Boolean),
    });
  }
  return blocks;
}

/** The first ```sh block of `file`, marked or not: the README's first command is where a newcomer starts. */
export function firstBlockLine(root: string, file: string): number {
  const text = readFileSync(join(root, file), 'utf8');
  const first = text.matchAll(FENCE).next().value;
  return first ? text.slice(0, first.index).split('\n').length : -1;
}
