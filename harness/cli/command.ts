// What every subcommand is: one Command object with its name, summary, flags (each with its help)
// and run. Its usage and --help are generated from it, and its parser takes its options from the
// same flags, so a flag cannot be accepted and not shown. The flags' table is the feature's own
// (harness/X/flags.ts); the Command parses with it and hands the values to the feature's run.
import type { CommandIO, Flag, Flags } from '../../lib/command.ts';

export interface Command {
  name: string;
  summary: string;
  /** The command line's forms before its flags (`PATH...`, `--all-owners --namespace NS ...`): one line each. */
  forms?: readonly string[];
  flags: Flags;
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

/** Only some of a command's flags (one of its forms parses these alone). */
export function pickFlags<F extends Flags, K extends keyof F & string>(flags: F, names: readonly K[]): Pick<F, K> {
  return Object.fromEntries(names.map((name) => [name, flags[name]])) as Pick<F, K>;
}

const flagText = (name: string, flag: Flag) =>
  `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}`;

/** The usage lines: each form, then `[flags]` when there are any. */
export function usageOf(command: Command): string {
  const flags = Object.keys(command.flags).length ? ' [flags]' : '';
  const forms = command.forms?.length ? command.forms : [''];
  return forms
    .map((form, i) => `${i ? '       ' : ''}termlab ${command.name}${form ? ` ${form}` : ''}${flags}`)
    .join('\n');
}

/** `termlab NAME --help`: the summary, the usage, and every flag with its help. */
export function helpOf(command: Command): string {
  const rows = Object.entries(command.flags).map(([name, flag]) => [flagText(name, flag), flag.help] as const);
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return [
    `termlab ${command.name} — ${command.summary}`,
    `usage: ${usageOf(command)}`,
    ...(rows.length ? ['', 'flags:', ...rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`)] : []),
    '',
  ].join('\n');
}
