// `termlab run`: the lab on a cluster (or --sim, the simulated one), then observations, grades, reports.
import { parseArgs } from 'node:util';
import type { StartSim } from '../../run/command.ts';
import { runFlags } from '../../run/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export function runCommand(startSim: StartSim): Command {
  return {
    name: 'run',
    summary: 'run the lab: delete pods during a request (or roll out a Deployment under load) and record what happens',
    flags: runFlags,
    async run(argv, io) {
      const { values, positionals } = parseArgs({ args: argv, strict: true, options: parseOptions(runFlags) });
      return (await import('../../run/command.ts')).createRunCommand(startSim).run(values, positionals, io);
    },
  };
}
