// `termlab class student NAME`: the instructor makes one student's identity and kubeconfig.
import type { CommandIO } from '../../../lib/command.ts';
import { TermlabError } from '../../../lib/errors.ts';
import { classFlags } from '../../class/flags.ts';
import { type Command, parseFlags } from '../command.ts';

function parse(argv: string[], io: Pick<CommandIO, 'err'>) {
  const [sub, ...rest] = argv;
  if (sub !== 'student')
    throw new TermlabError(
      'USAGE',
      sub === undefined
        ? 'a subcommand is needed: student'
        : `unknown subcommand ${JSON.stringify(sub)}: the one there is, is student`,
    );
  return parseFlags('class', classFlags, rest, io, true);
}

export const classCommand: Command = {
  name: 'class',
  summary: "for instructors, a class on one cluster: make a student's identity and kubeconfig",
  forms: ['student NAME'],
  flags: classFlags,
  examples: [
    {
      about: "alice's identity in the class termlab, her kubeconfig valid 48 hours",
      line: 'termlab class student alice -n termlab --output-file alice.kubeconfig --hours 48',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../class/student-command.ts')).studentCommand.run(values, positionals, io);
  },
};
