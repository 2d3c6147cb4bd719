// The commands termlab tells its user to run next: a `next:`, `try:` or `then` followed by a command, and any
// command in backticks. Each is what a student copies, so each must work where it was printed.

const COMMAND = String.raw`(?:npx |npm |node bin/termlab\.js |termlab )`;
const AFTER_WORD = new RegExp(String.raw`(?:\bnext:|\btry:|\bthen) +(${COMMAND}[^\`(]*?)\s*(?:\(|$)`, 'g');
const IN_BACKTICKS = new RegExp(String.raw`\`(${COMMAND}[^\`]*)\``, 'g');

/** The hints of a screen, each once, in the order printed. */
export function hintsIn(lines: string[]): string[] {
  const found = lines.flatMap((line) => [
    ...[...line.matchAll(AFTER_WORD)].map((m) => m[1]!),
    ...[...line.matchAll(IN_BACKTICKS)].map((m) => m[1]!),
  ]);
  return [...new Set(found.map((h) => h.trim().replace(/[.;,]$/, '')))];
}

/** A hint as typed in a fresh clone: `termlab X` is not on the PATH there; the README's `npx termlab X` is. */
export const asTyped = (hint: string): string => (hint.startsWith('termlab ') ? `npx ${hint}` : hint);

/** One spelling for one command: `npx termlab X`, `node bin/termlab.js X` and `termlab X` are the same. */
export const sameCommand = (line: string): string =>
  line
    .replace(/^(npx termlab|node bin\/termlab\.js) /, 'termlab ')
    .replace(/\s+/g, ' ')
    .trim();
