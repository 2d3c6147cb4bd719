// `termlab reap`: this owner's leftover lab pods; with --all-owners, an instructor's sweep of the class.
import type { CommandIO } from '../../../lib/command.ts';
import { REAP_ALL_FLAGS, REAP_OWN_FLAGS, reapFlags } from '../../safety/flags.ts';
import { type Command, parseFlags, pickFlags } from '../command.ts';

// Each form parses only its own flags.
const parseAll = (argv: string[], io: Pick<CommandIO, 'err'>) =>
  parseFlags('reap', pickFlags(reapFlags, REAP_ALL_FLAGS), argv, io);
const parseOwn = (argv: string[], io: Pick<CommandIO, 'err'>) =>
  parseFlags('reap', pickFlags(reapFlags, REAP_OWN_FLAGS), argv, io);

export const reap: Command = {
  name: 'reap',
  summary: "delete this owner's leftover lab pods of runs that are no longer alive",
  forms: ['', '--all-owners (-n NS | --class NAME) (--env NAME | --lab FILE)'],
  flags: reapFlags,
  examples: [
    { about: 'what would go, in namespace lab, deleting nothing', line: 'termlab reap -n lab --dry-run' },
    {
      about: "instructor: every expired lab pod of the class's namespaces",
      line: 'termlab reap --all-owners --class termlab --lab manifests/lab.yaml',
    },
  ],
  parse: (argv, io) => (argv.includes('--all-owners') ? parseAll(argv, io) : parseOwn(argv, io)),
  async run(argv, io) {
    if (argv.includes('--all-owners'))
      return (await import('../../safety/reap-all-command.ts')).reapAllCommand(parseAll(argv, io).values, io);
    const { values, positionals } = parseOwn(argv, io);
    return (await import('../../safety/command.ts')).reapCommand.run(values, positionals, io);
  },
};
