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
  witness: {
    type: 'boolean',
    help: "hold each hand-in against the class's witness on the cluster (the instructor's kubeconfig): a vouched column",
  },
  'witness-file': {
    type: 'string',
    value: 'FILE',
    help: 'the same, from the records `termlab class witness export` wrote (no cluster needed)',
  },
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NS',
    help: "with --witness: the class's namespace (default termlab); the witness's records are in NS-witness",
  },
  context: { type: 'string', value: 'NAME', help: 'with --witness: the kubeconfig context (default: the current one)' },
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'with --witness: the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)',
  },
} as const satisfies Flags;
