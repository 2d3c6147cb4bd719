// `termlab class student NAME`: the instructor makes one student's identity and kubeconfig.
import { parseArgs } from 'node:util';
import { TermlabError } from '../../../lib/errors.ts';
import { classFlags } from '../../class/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export const classCommand: Command = {
  name: 'class',
  summary:
    'a class on one cluster: make a student identity and its kubeconfig (instructor; exit 2 bad input, 3 no cluster or class)',
  forms: ['student NAME'],
  flags: classFlags,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub !== 'student')
      throw new TermlabError(
        'USAGE',
        sub === undefined
          ? 'a subcommand is needed: student'
          : `unknown subcommand ${JSON.stringify(sub)}: the one there is, is student`,
      );
    const { values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: parseOptions(classFlags),
    });
    return (await import('../../class/student-command.ts')).studentCommand.run(values, positionals, io);
  },
};
