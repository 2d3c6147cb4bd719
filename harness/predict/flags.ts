// `termlab predict`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/predict.ts).
import type { Flags } from '../../lib/command.ts';

export const predictFlags = {
  student: { type: 'string', value: 'NAME', help: 'your name, written into the predictions' },
  'output-file': {
    type: 'string',
    value: 'FILE',
    help: 'the file to write (default predictions.yaml)',
    deprecated: ['--out', '-o'],
  },
  template: { type: 'boolean', help: 'write a template to fill in instead of asking at the terminal' },
  force: { type: 'boolean', help: 'replace an existing predictions file' },
  scenarios: { type: 'string', value: 'FILE', help: 'the scenario file (default manifests/scenarios.yaml)' },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
} as const satisfies Flags;
