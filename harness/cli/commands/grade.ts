// `termlab grade`: saved observations graded offline; with --gradebook (or --lab) a class's submissions.
import type { CommandIO } from '../../../lib/command.ts';
import { gradeFlags } from '../../grade/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('grade', gradeFlags, argv, io, true);

export const grade: Command = {
  name: 'grade',
  summary: 'grade saved observation files offline (no cluster needed)',
  forms: ['PATH...', 'SUBMISSIONS... --gradebook FILE.csv'],
  flags: gradeFlags,
  examples: [
    { about: 'the last run again, offline', line: 'termlab grade reports/latest' },
    {
      about: 'the same with your predictions beside it, as JSON',
      line: 'termlab grade reports/latest --predictions predictions.yaml -o json',
    },
    {
      about: "a class's hand-ins into a gradebook and a class report",
      line: 'termlab grade submissions/ --gradebook grades.csv --lab manifests/lab.yaml --html class.html',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../grade/command.ts')).gradeCommand.run(values, positionals, io);
  },
};
