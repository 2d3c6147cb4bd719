// termlab's own words for a flag Node's parseArgs refused: one line, the nearest valid flag, the usage.
const FLAG = /--[a-z][a-z0-9-]*/g;

/** The long flags a command's usage names. */
export function flagsOf(usage: string): string[] {
  return [...new Set(usage.match(FLAG) ?? [])];
}

/** Edit distance, for "did you mean": small strings only (flags). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The valid flag nearest to `flag`, when it is near enough to be a typo (or a prefix of one flag). */
export function nearestFlag(flag: string, flags: string[]): string | null {
  const prefixed = flags.filter((f) => f.startsWith(flag));
  if (prefixed.length === 1) return prefixed[0]!;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(flag.length / 3)) + 1;
  for (const f of flags) {
    const d = distance(flag, f);
    if (d < bestDistance) { best = f; bestDistance = d; }
  }
  return best;
}

/** The message for a parseArgs error (its `code` starts ERR_PARSE_ARGS), or null for any other error. */
export function flagErrorMessage(error: unknown, usage: string): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (!(error instanceof TypeError) || !code?.startsWith('ERR_PARSE_ARGS')) return null;
  // Node quotes the flag in its text; take it from there, never echo the rest (its quoting is unbalanced).
  const named = error.message.match(/'(-{1,2}[^' ]+)/)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = named.startsWith('--') ? nearestFlag(named, flagsOf(usage)) : null;
      return `unknown flag ${named}${near ? `; did you mean ${near}?` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return error.message.includes('argument missing') ? `${named} needs a value` : `${named} takes no value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(error.message.match(/'([^']*)'/)?.[1] ?? '')}: this command takes flags only`;
    default:
      return error.message;
  }
}

/** `--help` or `-h` among a command's arguments (before a `--`). */
export function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
