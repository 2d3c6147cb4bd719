// `termlab grade`: saved observations graded offline; with --gradebook (or --lab) a class's submissions.
import type { Command, Flags } from '../command.ts';

export const gradeFlags = {
  predictions: {
    type: 'string',
    value: 'FILE',
    help: 'the predictions made before the run, graded beside the results',
  },
  json: { type: 'boolean', help: 'print the grades as JSON instead of text' },
  md: { type: 'string', value: 'FILE', help: 'write a Markdown report (a class report with --gradebook)' },
  html: { type: 'string', value: 'FILE', help: 'write an HTML report (a class report with --gradebook)' },
  junit: { type: 'string', value: 'FILE', help: 'write a JUnit XML report (not for a class)' },
  gradebook: { type: 'string', value: 'FILE.csv', help: 'grade packed submissions as a class into this CSV gradebook' },
  'gradebook-json': { type: 'string', value: 'FILE', help: "the class gradebook's rows as JSON" },
  lab: { type: 'string', value: 'FILE', help: 'the lab definition the class is graded against' },
} as const satisfies Flags;

export const grade: Command = {
  name: 'grade',
  summary: 'grade saved observation files offline (no cluster needed)',
  forms: ['PATH...', 'SUBMISSIONS... --gradebook FILE.csv'],
  flags: gradeFlags,
  run: async (argv, io) => (await import('../../grade/command.ts')).gradeCommand.run(argv, io),
};
