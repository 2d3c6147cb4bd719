// `termlab class student NAME`: the instructor makes one student's identity and kubeconfig;
// `termlab class witness export --output-file FILE`: the class's witness records to a file.
import type { CommandIO } from '../../../lib/command.ts';
import { TermlabError } from '../../../lib/errors.ts';
import { classFlags } from '../../class/flags.ts';
import { type Command, parseFlags } from '../command.ts';

function parse(argv: string[], io: Pick<CommandIO, 'err'>) {
  const [sub, ...rest] = argv;
  if (sub !== 'student' && sub !== 'witness')
    throw new TermlabError(
      'USAGE',
      sub === undefined
        ? 'a subcommand is needed: student or witness'
        : `unknown subcommand ${JSON.stringify(sub)}: the ones there are, are student and witness`,
    );
  return parseFlags('class', classFlags, rest, io, true);
}

export const classCommand: Command = {
  name: 'class',
  summary:
    "for instructors, a class on one cluster: make a student's identity and kubeconfig, or export the witness's records",
  forms: ['student NAME', 'witness export --output-file FILE.json'],
  flags: classFlags,
  examples: [
    {
      about: "alice's identity in the class termlab, her kubeconfig valid 48 hours",
      line: 'termlab class student alice -n termlab --output-file alice.kubeconfig --hours 48',
    },
    {
      about: "the class's witness records, to regrade offline with grade --witness-file",
      line: 'termlab class witness export --output-file witness.json',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    if (argv[0] === 'witness')
      return (await import('../../class/witness-command.ts')).witnessCommand.run(values, positionals, io);
    return (await import('../../class/student-command.ts')).studentCommand.run(values, positionals, io);
  },
};
