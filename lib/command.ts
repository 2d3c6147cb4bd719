// What a command is handed, below both the CLI and what it runs: the IO it writes to, and the shape of a
// flag table. Each feature keeps its flags' table beside its command (harness/X/flags.ts); the CLI
// (harness/cli) parses the command line with that table, shows it in --help, and hands the parsed values
// to the command's run. Commands never call process.exit; the CLI does, once.
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  isTTY: boolean;
}

export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's name in the usage: FILE, N, a,b. */
  value?: string;
  help: string;
  /** The only values it takes (an output format's `text`, `json`, `yaml`): any other is refused, naming them. */
  choices?: readonly string[];
  /** Old spellings still accepted for a release, each with one deprecation line naming this flag. */
  deprecated?: readonly OldSpelling[];
}

/**
 * An old spelling of a flag: `--out` or `-o` (the same value under its new name), or a boolean flag that meant
 * one of this flag's values (`{ flag: '--json', value: 'json' }`: `--json` is `--output json`).
 */
export type OldSpelling = string | { flag: string; value: string };

export type Flags = Readonly<Record<string, Flag>>;

/** The values parsed from a flag table: a string flag's text, a boolean flag's presence. */
export type Values<F extends Flags> = {
  [K in keyof F]?: F[K]['type'] extends 'boolean' ? boolean : string;
};

/** What a command's module gives the CLI: its run, on the values and positionals the CLI parsed with its flags. */
export interface CommandModule<F extends Flags> {
  run(values: Values<F>, positionals: string[], io: CommandIO): Promise<number>;
}
