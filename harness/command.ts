// What every subcommand is: a name, its usage, and a run that returns an exit code.
// Commands never call process.exit; the CLI does, once.
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  isTTY: boolean;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[], io: CommandIO): Promise<number>;
}
