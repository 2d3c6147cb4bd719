// termlab's entry: parse the subcommand and dispatch. Each command lives in its own folder.
import { setMaxListeners } from 'node:events';
import type { Command, CommandIO } from './command.ts';
import { EXIT, exitCodeFor, isTermlabError } from './errors.ts';
import { flagErrorMessage, wantsHelp } from './flags.ts';
import { classCommand } from './class/student-command.ts';
import { gradeCommand } from './grade/command.ts';
import { escapedApiFailure } from './kube/index.ts';
import { packCommand } from './pack/command.ts';
import { createPredictCommand } from './predict/command.ts';
import { createRunCommand } from './run/command.ts';
import { reapCommand } from './safety/command.ts';
import { scenariosCommand } from './scenario/command.ts';
import { schemaCommand } from './schema-command.ts';
import { HARNESS_VERSION } from './version.ts';

// The one place harness/ reaches into cluster/: the simulated cluster, loaded only when used.
export const loadSim = () => import('../cluster/sim/index.ts');

const simCommand: Command = {
  name: 'sim',
  summary: 'run the simulated cluster in the foreground (Ctrl-C stops it)',
  usage: 'termlab sim [--port N] [--kubeconfig-out FILE]',
  run: async (argv, io) => (await loadSim()).simCommand.run(argv, io),
};

const runCommand = createRunCommand(async (options) => (await loadSim()).startSimCluster({ kubeVersion: options.kubeVersion, ...(options.proxySyncDelayMs === undefined ? {} : { proxy: { syncDelayMs: options.proxySyncDelayMs } }) }));

const commands: Command[] = [runCommand, scenariosCommand, gradeCommand, reapCommand, schemaCommand, simCommand];
commands.push(packCommand);
commands.push(createPredictCommand());
commands.push(classCommand);

function usage(): string {
  return [`termlab ${HARNESS_VERSION} — see and grade what graceful shutdown in Kubernetes really does`, '', 'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}\n             ${c.usage}`), ''].join('\n');
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
    out: (text) => { if (!stdoutClosed) process.stdout.write(text); },
    err: (text) => process.stderr.write(text),
    signal: abort.signal,
    isTTY: Boolean(process.stdout.isTTY),
  };
  if (!name || name === '--help' || name === '-h' || name === 'help') { io.out(usage()); return name ? EXIT.ok : EXIT.badInput; }
  if (name === '--version') { io.out(`${HARNESS_VERSION}\n`); return EXIT.ok; }
  const command = commands.find((c) => c.name === name);
  if (!command) { io.err(`termlab: unknown command ${JSON.stringify(name)}\n\n${usage()}`); return EXIT.badInput; }
  if (wantsHelp(rest)) { io.out(`termlab ${command.name} — ${command.summary}\nusage: ${command.usage}\n`); return EXIT.ok; }
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(EXIT.interrupted);
    io.err('\ntermlab: stopping cleanly (Ctrl-C again to quit at once)\n');
    abort.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  // A bug must not pass for a verdict: say so plainly, with its own exit code. After Ctrl-C the
  // run was interrupted whatever failed while it stopped, and the exit code says that.
  const internalError = (error: unknown) => {
    // A network or API failure that escaped its call is the cluster's doing, not a bug: one line, exit 3.
    const failure = escapedApiFailure(error);
    if (failure) {
      io.err(`termlab ${name}: the cluster's API failed: ${failure.text}\n`);
      return abort.signal.aborted ? EXIT.interrupted : EXIT.clusterUnreachable;
    }
    io.err(`termlab ${name}: internal error (please report it): ${error instanceof Error ? error.stack : String(error)}\n`);
    return abort.signal.aborted ? EXIT.interrupted : EXIT.internalError;
  };
  process.on('uncaughtException', (error) => process.exit(internalError(error)));
  process.on('unhandledRejection', (error) => process.exit(internalError(error)));
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (isTermlabError(error)) { io.err(`termlab ${name}: ${error.message}\n`); return exitCodeFor(error.code); }
    const flagError = flagErrorMessage(error, command.usage);
    if (flagError) {
      io.err(`termlab ${name}: ${flagError}\nusage: ${command.usage}\n`);
      return EXIT.badInput;
    }
    return internalError(error);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
}

process.exitCode = await main(process.argv.slice(2));
