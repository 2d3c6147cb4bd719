// termlab's own words for a flag Node's parseArgs refused: one line, the nearest valid flag, the usage.
import { nearest } from '../../lib/suggest.ts';
const FLAG = /--[a-z][a-z0-9-]*/g;

export { nearest as nearestFlag };

/** The long flags a command's usage names. */
export function flagsOf(usage: string): string[] {
  return [...new Set(usage.match(FLAG) ?? [])];
}

/** The message for a parseArgs error (its `code` starts ERR_PARSE_ARGS), or null for any other error; `flags`: the command's, `--name`. */
export function flagErrorMessage(error: unknown, flags: string[]): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (!(error instanceof TypeError) || !code?.startsWith('ERR_PARSE_ARGS')) return null;
  // Node quotes the flag in its text; take it from there, never echo the rest (its quoting is unbalanced).
  // A flag with a short form is quoted as '-n, --namespace <value>': named as -n/--namespace.
  const quoted = error.message.match(/'(-{1,2}[^' ,]+)(?:, (--[^' ]+))?/);
  const named = quoted ? [quoted[1], quoted[2]].filter(Boolean).join('/') : '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = named.startsWith('--') ? nearest(named, flags) : null;
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
