// What every subcommand is: one Command object with its name, summary, flags (each with its help),
// examples and run. Its usage and --help are generated from it, and its parser takes its options from the
// same flags, so a flag cannot be accepted and not shown. The flags' table is the feature's own
// (harness/X/flags.ts); the Command parses with it and hands the values to the feature's run.
import { parseArgs } from 'node:util';
import type { CommandIO, Flag, Flags, Values } from '../../lib/command.ts';
import { checkChoices, newSpellings } from './old-spellings.ts';

/** A help page's width: every line of it fits. */
export const HELP_WIDTH = 100;

export interface Example {
  /** What it does, in a few words: the `#` line above it. */
  about: string;
  /** The whole command line, `termlab NAME ...`, as a user types it. */
  line: string;
}

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface Command {
  name: string;
  summary: string;
  /** The command line's forms before its flags (`PATH...`, `--all-owners --namespace NS ...`): one line each. */
  forms?: readonly string[];
  flags: Flags;
  /** Shown under examples: in --help; a test parses each with `parse`, so none can rot. */
  examples: readonly Example[];
  /** The command line as `run` parses it: old spellings in their new ones (one line each on `io.err`). */
  parse(argv: string[], io: Pick<CommandIO, 'err'>): Parsed;
  /** Parses the command line with its flags, loads the command's module (only the chosen one is loaded) and runs it. */
  run(argv: string[], io: CommandIO): Promise<number>;
}

type ParseOptions<F extends Flags> = {
  [K in keyof F]: F[K]['short'] extends string ? { type: F[K]['type']; short: F[K]['short'] } : { type: F[K]['type'] };
};

/** parseArgs's options for these flags. */
export function parseOptions<F extends Flags>(flags: F): ParseOptions<F> {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, flag] of Object.entries(flags))
    options[name] = flag.short ? { type: flag.type, short: flag.short } : { type: flag.type };
  return options as ParseOptions<F>;
}

/** A command line parsed with these flags: old spellings rewritten (a warning each), choices checked. */
export function parseFlags<F extends Flags>(
  name: string,
  flags: F,
  argv: string[],
  io: Pick<CommandIO, 'err'>,
  allowPositionals = false,
): { values: Values<F>; positionals: string[] } {
  const args = newSpellings(flags, argv, (line) => io.err(`termlab ${name}: ${line}\n`));
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals, options: parseOptions(flags) });
  checkChoices(flags, values);
  return { values: values as Values<F>, positionals };
}

/** Only some of a command's flags (one of its forms parses these alone). */
export function pickFlags<F extends Flags, K extends keyof F & string>(flags: F, names: readonly K[]): Pick<F, K> {
  return Object.fromEntries(names.map((name) => [name, flags[name]])) as Pick<F, K>;
}

/** Words filled into lines of at most `width` characters (a longer word keeps its own line). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : [''];
}

/** `first` then `text` wrapped to the help's width, each line after the first indented by `indent`. */
export function hanging(first: string, text: string, indent: number): string[] {
  const [head = '', ...rest] = wrapText(text, HELP_WIDTH - first.length);
  const tail = rest.length ? wrapText(rest.join(' '), HELP_WIDTH - indent) : [];
  return [first + head, ...tail.map((l) => ' '.repeat(indent) + l)];
}

const flagText = (name: string, flag: Flag) =>
  `${flag.short ? `-${flag.short}, ` : '    '}--${name}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}`;

/** The usage lines: each form, then `[flags]` when there are any. */
export function usageOf(command: Command): string {
  const flags = Object.keys(command.flags).length ? ' [flags]' : '';
  const forms = command.forms?.length ? command.forms : [''];
  return forms
    .map((form, i) => `${i ? '       ' : ''}termlab ${command.name}${form ? ` ${form}` : ''}${flags}`)
    .join('\n');
}

/** The flag column's widest: a longer flag has its help on the lines below it. */
const FLAG_COLUMN = 32;

function flagRows(flags: Flags): string[] {
  const rows = Object.entries(flags).map(([name, flag]) => [flagText(name, flag), flag.help] as const);
  const width = Math.min(FLAG_COLUMN, Math.max(0, ...rows.map(([left]) => left.length)));
  const indent = 2 + width + 2;
  return rows.flatMap(([left, help]) => {
    const text = wrapText(help, HELP_WIDTH - indent).map((l) => ' '.repeat(indent) + l);
    if (left.length > width) return [`  ${left}`, ...text];
    return [`  ${left.padEnd(width)}  ${text[0]!.trimStart()}`, ...text.slice(1)];
  });
}

/** The old spellings still accepted, each beside its new one. */
function oldSpellingRows(flags: Flags): string[] {
  const shorts = new Set(Object.values(flags).map((f) => f.short));
  return Object.entries(flags).flatMap(([name, flag]) =>
    (flag.deprecated ?? []).map((old) => {
      const value = flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : '';
      if (typeof old !== 'string') return `  ${old.flag}: now -o ${old.value}`;
      if (old.startsWith('--')) return `  ${old}${value}: now --${name}${value}`;
      // -o is a format where the command has formats, else a file unless its value is a format's name.
      const when = shorts.has(old.slice(1))
        ? `while${value} has a / or a file extension`
        : `while${value} is not json, yaml, wide, name or text`;
      return `  ${old}${value}: now --${name}${value} (${when})`;
    }),
  );
}

/** `termlab NAME --help`: the summary, the usage, every flag with its help, the examples; 100 columns at most. */
export function helpOf(command: Command): string {
  const old = oldSpellingRows(command.flags);
  return [
    ...hanging(`termlab ${command.name} — `, command.summary, 2),
    `usage: ${usageOf(command)}`,
    ...(Object.keys(command.flags).length ? ['', 'flags:', ...flagRows(command.flags)] : []),
    ...(command.examples.length
      ? ['', 'examples:', ...command.examples.flatMap((e) => [...hanging('  # ', e.about, 4), `  ${e.line}`])]
      : []),
    ...(old.length ? ['', 'old spellings, still accepted in this release (each prints a warning):', ...old] : []),
    '',
  ].join('\n');
}
