// The one way a dev tool (an npm script under dev/) starts and ends, as harness/cli/main.ts is the CLI's:
// `--help` prints the tool's usage; a TermlabError ends it with `name: message` and the exit code of its
// code (lib/errors.ts, the one table); anything else is a bug, printed with its stack (exit 70), except an
// API failure that escaped its call (the cluster's doing: one line, exit 3). The only process.exit in dev/.
//
// Ctrl-C (or SIGTERM) first does what the tool's `interrupt` says:
//   'exit'    end at once with 130, after `onInterrupt` (what the tool started that would outlive it);
//             for a tool whose steps leave nothing half done that a later run does not clean up;
//   'abort'   abort the signal `main` was given and let it stop and clean up itself (fidelity's runs,
//             the simulated cluster, a fault that must be undone): then 130 whatever it ended with;
//   'finish'  go on to the end: the tool is itself the clean-up (cluster:down); then 130.
// A second one, past the window in which a launcher relays the same Ctrl-C again, ends the tool at once.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, exitCodeFor, isTermlabError, STOP_SIGNALS, type StopSignal, TermlabError } from '../lib/errors.ts';

export interface DevTool {
  /** The npm script, as every message of the tool begins: `cluster:up`, `fidelity`. */
  name: string;
  /** How it is run, one line: printed for --help and after a flag it does not take. */
  usage: string;
  interrupt?: 'exit' | 'abort' | 'finish';
  /** Synchronous: run on an interrupt before an 'exit'. */
  onInterrupt?: () => void;
}

/** How long after a Ctrl-C another SIGINT or SIGTERM counts as the same one (npm and tsx relay it), as the CLI. */
const SAME_INTERRUPT_MS = 1000;

/** The tool's flags, parsed strictly: an unknown flag or a missing value is a USAGE error naming the usage. */
export function devArgs<const O extends NonNullable<ParseArgsConfig['options']>, const P extends boolean = false>(
  tool: Pick<DevTool, 'usage'>,
  options: O,
  config: { args?: string[]; allowPositionals?: P } = {},
) {
  try {
    return parseArgs({
      args: config.args ?? process.argv.slice(2),
      options,
      strict: true,
      allowPositionals: (config.allowPositionals ?? false) as P,
    });
  } catch (error) {
    if (!String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS_')) throw error;
    throw new TermlabError('USAGE', `${(error as Error).message} (usage: ${tool.usage})`);
  }
}

/** A whole number from a flag, at least `min`; a USAGE error naming the flag otherwise. */
export function wholeNumber(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max)
    throw new TermlabError(
      'USAGE',
      `${flag}: expected a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** What ends the tool: the exit code and the line that says why (none for a plain success). */
async function outcome(tool: DevTool, error: unknown): Promise<{ code: number; line: string | null }> {
  if (isTermlabError(error)) return { code: exitCodeFor(error.code), line: `${tool.name}: ${error.message}` };
  // Loaded only here: the Kubernetes client is heavy, and most tools never need it. A module that cannot be
  // loaded is itself the bug to report.
  const failure = await import('../harness/kube/failures.ts').then(
    (m) => m.escapedApiFailure(error),
    () => null,
  );
  if (failure)
    return { code: EXIT.clusterUnreachable, line: `${tool.name}: the cluster's API failed: ${failure.text}` };
  return {
    code: EXIT.internalError,
    line: `${tool.name}: internal error (please report it): ${error instanceof Error ? error.stack : String(error)}`,
  };
}

async function end(code: number, line: string | null): Promise<never> {
  if (line) process.stderr.write(`${line}\n`);
  // Exit once stdout and stderr have taken every byte.
  await Promise.all(
    [process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))),
  );
  process.exit(code);
}

/** Runs the tool's main and ends the process with the exit code of how it ended. */
export async function runDevTool(tool: DevTool, main: (signal: AbortSignal) => Promise<void> | void): Promise<never> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: ${tool.usage}\n`);
    return end(EXIT.ok, null);
  }
  const abort = new AbortController();
  const mode = tool.interrupt ?? 'exit';
  let firstInterrupt: number | null = null;
  // Ctrl-C and SIGTERM stop the same way; each exits with its own code (130, 143: 128 + the signal's number).
  let stopExit: number = EXIT.interrupted;
  let named = '';
  const onSignal = (signal: StopSignal) => {
    const now = performance.now();
    if (firstInterrupt !== null) {
      if (now - firstInterrupt > SAME_INTERRUPT_MS)
        void end(STOP_SIGNALS[signal].exit, `${tool.name}: interrupted again: quitting at once`);
      return;
    }
    firstInterrupt = now;
    stopExit = STOP_SIGNALS[signal].exit;
    named = signal === 'SIGINT' ? '' : ` (${signal})`;
    if (mode === 'exit') {
      tool.onInterrupt?.();
      void end(stopExit, `\n${tool.name}: interrupted${named}`);
      return;
    }
    process.stderr.write(
      signal === 'SIGINT'
        ? `\n${tool.name}: ${mode === 'abort' ? 'stopping cleanly' : 'finishing first'} (Ctrl-C again to quit at once)\n`
        : `\n${tool.name}: SIGTERM received: ${mode === 'abort' ? 'stopping cleanly' : 'finishing first'} (a second signal quits at once)\n`,
    );
    abort.abort(new TermlabError('INTERRUPTED', `interrupted${named}`));
  };
  const onSigint = () => onSignal('SIGINT');
  const onSigterm = () => onSignal('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  const failed = (error: unknown) =>
    void outcome(tool, error).then(({ code, line }) => end(abort.signal.aborted ? stopExit : code, line));
  process.on('uncaughtException', failed);
  process.on('unhandledRejection', failed);
  try {
    await main(abort.signal);
  } catch (error) {
    const { code, line } = await outcome(tool, error);
    // After Ctrl-C the tool was interrupted, whatever failed while it stopped.
    return end(abort.signal.aborted ? stopExit : code, line);
  }
  return end(
    abort.signal.aborted ? stopExit : EXIT.ok,
    abort.signal.aborted ? `${tool.name}: interrupted${named}` : null,
  );
}
