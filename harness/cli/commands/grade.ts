// `termlab grade`: saved observations graded offline; with --gradebook (or --lab) a class's submissions.
import { parseArgs } from 'node:util';
import { gradeFlags } from '../../grade/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export const grade: Command = {
  name: 'grade',
  summary: 'grade saved observation files offline (no cluster needed)',
  forms: ['PATH...', 'SUBMISSIONS... --gradebook FILE.csv'],
  flags: gradeFlags,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: parseOptions(gradeFlags),
    });
    return (await import('../../grade/command.ts')).gradeCommand.run(values, positionals, io);
  },
};
