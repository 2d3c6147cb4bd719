// `termlab verify deployment/NAME`: the lab's evidence for a team's own Deployment — roll it (or
// delete one pod) under load through its Service and learn whether any request failed, and why.
import { parseArgs } from 'node:util';
import type { StartSim } from '../../run/command.ts';
import { verifyFlags } from '../../verify/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export function verifyCommand(startSim: StartSim): Command {
  return {
    name: 'verify',
    summary:
      'roll your own Deployment under load through its Service: did any request fail, at which pod, why, and what would have saved it',
    forms: ['deployment/NAME'],
    flags: verifyFlags,
    async run(argv, io) {
      const { values, positionals } = parseArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: parseOptions(verifyFlags),
      });
      return (await import('../../verify/command.ts')).createVerifyCommand(startSim).run(values, positionals, io);
    },
  };
}
