// termlab's entry: find the subcommand and run it. Each is one Command object (commands/); only the
// chosen one's module is loaded, so a spawn of the CLI pays for that command alone.
import { setMaxListeners } from 'node:events';
import type { CommandIO } from '../../lib/command.ts';
import { hanging, helpOf, usageOf } from './command.ts';
import { createCommands } from './commands/index.ts';
import {
  EXIT,
  exitCodeFor,
  Interrupted,
  interruptedExit,
  isTermlabError,
  STOP_SIGNALS,
  type StopSignal,
} from '../../lib/errors.ts';
import { flagErrorMessage, wantsHelp } from './flags.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';

// The one place harness/ reaches into cluster/: the simulated cluster, loaded only when used.
export const loadSim = () => import('../../cluster/sim/index.ts');

const commands = createCommands(loadSim);
/** How long after a Ctrl-C another SIGINT or SIGTERM still counts as the same one, relayed by a launcher. */
const SAME_INTERRUPT_MS = 1000;

function usage(): string {
  return [
    `termlab ${HARNESS_VERSION} — see and grade what graceful shutdown in Kubernetes really does`,
    '',
    'commands:',
    ...commands.flatMap((c) => [
      ...hanging(`  ${c.name.padEnd(10)} `, c.summary, 13),
      `             ${usageOf(c).replaceAll('\n       ', '\n             ')}`,
    ]),
    '',
    'termlab COMMAND --help lists its flags and examples.',
    '',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const abort = new AbortController();
  // Every scenario, watch and request in a run listens on this one signal.
  setMaxListeners(1000, abort.signal);
  // A closed stdout (`| head`) is the reader leaving, not a failure: stop writing to it, quietly.
  let stdoutClosed = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdoutClosed = true;
  });
  const io: CommandIO = {
    out: (text) => {
      if (!stdoutClosed) process.stdout.write(text);
    },
    err: (text) => process.stderr.write(text),
    signal: abort.signal,
    isTTY: Boolean(process.stdout.isTTY),
  };
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name ? EXIT.ok : EXIT.badInput;
  }
  if (name === '--version') {
    io.out(`${HARNESS_VERSION}\n`);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`termlab: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return EXIT.badInput;
  }
  if (wantsHelp(rest)) {
    io.out(helpOf(command));
    return EXIT.ok;
  }
  // One Ctrl-C can arrive more than once: a terminal signals the whole process group, and a launcher in
  // it (npx forwards to its child, tsx relays to its own) sends it again. A second signal within this
  // window is that same Ctrl-C, not the user's second one: the run still stops cleanly.
  let firstInterrupt: number | null = null;
  // Ctrl-C (SIGINT) and SIGTERM stop the same way; each is named as itself and exits with its own code (130, 143).
  const onSignal = (signal: StopSignal) => {
    const now = performance.now();
    if (firstInterrupt !== null) {
      if (now - firstInterrupt > SAME_INTERRUPT_MS) process.exit(STOP_SIGNALS[signal].exit);
      return;
    }
    firstInterrupt = now;
    io.err(
      signal === 'SIGINT'
        ? '\ntermlab: stopping cleanly (Ctrl-C again to quit at once)\n'
        : '\ntermlab: SIGTERM received: stopping cleanly (a second signal quits at once)\n',
    );
    abort.abort(new Interrupted(signal));
  };
  const onSigint = () => onSignal('SIGINT');
  const onSigterm = () => onSignal('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  /** After a stop, a command's 130 (or any failure while it stopped) is the code of the signal that stopped it. */
  const stopped = () => interruptedExit(abort.signal);
  // A bug must not pass for a verdict: say so plainly, with its own exit code. After Ctrl-C the
  // run was interrupted whatever failed while it stopped, and the exit code says that.
  const internalError = async (error: unknown) => {
    // A network or API failure that escaped its call is the cluster's doing, not a bug: one line, exit 3.
    // (Loaded here: the Kubernetes client is heavy, and a command that never talks to a cluster never needs it.)
    // A module that cannot be loaded (a bundle's chunk gone) is itself the bug to report, never a loop back here.
    const failure = await import('../kube/failures.ts').then(
      (m) => m.escapedApiFailure(error),
      () => null,
    );
    if (failure) {
      io.err(`termlab ${name}: the cluster's API failed: ${failure.text}\n`);
      return abort.signal.aborted ? stopped() : EXIT.clusterUnreachable;
    }
    io.err(
      `termlab ${name}: internal error (please report it): ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    return abort.signal.aborted ? stopped() : EXIT.internalError;
  };
  process.on('uncaughtException', (error) => void internalError(error).then((code) => process.exit(code)));
  process.on('unhandledRejection', (error) => void internalError(error).then((code) => process.exit(code)));
  try {
    const code = await command.run(rest, io);
    return code === EXIT.interrupted && abort.signal.aborted ? stopped() : code;
  } catch (error) {
    if (isTermlabError(error)) {
      io.err(`termlab ${name}: ${error.message}\n`);
      const code = exitCodeFor(error.code);
      return code === EXIT.interrupted && abort.signal.aborted ? stopped() : code;
    }
    const flagError = flagErrorMessage(
      error,
      Object.keys(command.flags).map((f) => `--${f}`),
    );
    if (flagError) {
      io.err(`termlab ${name}: ${flagError}\nusage: ${usageOf(command)}\n(termlab ${name} --help lists its flags)\n`);
      return EXIT.badInput;
    }
    return await internalError(error);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
}

const code = await main(process.argv.slice(2));
// Exit once stdout and stderr have taken every byte, not when the event loop has drained: twice here a
// `run --sim` of the rollouts printed its reports and then spun at 100 % CPU for as long as it was left
// (Node 20 and 24), inside Node's teardown of the handles still open (gdb: FreeEnvironment ->
// CleanupHandles -> uv_run, no syscall for seconds). Everything the command does is awaited by then.
await Promise.all(
  [process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))),
);
process.exit(code);
