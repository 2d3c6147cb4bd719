// `termlab grade`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/grade.ts).
import type { Flags } from '../../lib/command.ts';
import { outputFlag } from '../../lib/output-format.ts';

export const gradeFlags = {
  predictions: {
    type: 'string',
    value: 'FILE',
    help: 'the predictions made before the run, graded beside the results',
  },
  output: outputFlag('the grades'),
  md: { type: 'string', value: 'FILE', help: 'write a Markdown report (a class report with --gradebook)' },
  html: { type: 'string', value: 'FILE', help: 'write an HTML report (a class report with --gradebook)' },
  junit: { type: 'string', value: 'FILE', help: 'write a JUnit XML report (not for a class)' },
  gradebook: { type: 'string', value: 'FILE.csv', help: 'grade packed submissions as a class into this CSV gradebook' },
  'gradebook-json': { type: 'string', value: 'FILE', help: "the class gradebook's rows as JSON" },
  lab: { type: 'string', value: 'FILE', help: 'the lab definition the class is graded against' },
} as const satisfies Flags;
