// `termlab reap`: this owner's leftover lab pods; with --all-owners, an instructor's sweep of the class.
import { parseArgs } from 'node:util';
import { REAP_ALL_FLAGS, REAP_OWN_FLAGS, reapFlags } from '../../safety/flags.ts';
import { type Command, parseOptions, pickFlags } from '../command.ts';

export const reap: Command = {
  name: 'reap',
  summary: "delete this owner's leftover lab pods of runs that are no longer alive",
  forms: ['', '--all-owners (--namespace NS | --class NAME) (--env NAME | --lab FILE)'],
  flags: reapFlags,
  // Each form parses only its own flags.
  async run(argv, io) {
    if (argv.includes('--all-owners')) {
      const { values } = parseArgs({
        args: argv,
        strict: true,
        options: parseOptions(pickFlags(reapFlags, REAP_ALL_FLAGS)),
      });
      return (await import('../../safety/reap-all-command.ts')).reapAllCommand(values, io);
    }
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      options: parseOptions(pickFlags(reapFlags, REAP_OWN_FLAGS)),
    });
    return (await import('../../safety/command.ts')).reapCommand.run(values, positionals, io);
  },
};
