// `termlab predict`: the student's predictions, written before the run.
import type { Command, Flags } from '../command.ts';

export const predictFlags = {
  student: { type: 'string', value: 'NAME', help: 'your name, written into the predictions' },
  out: { type: 'string', short: 'o', value: 'FILE', help: 'the file to write (default predictions.yaml)' },
  template: { type: 'boolean', help: 'write a template to fill in instead of asking at the terminal' },
  force: { type: 'boolean', help: 'replace an existing predictions file' },
  scenarios: { type: 'string', value: 'FILE', help: 'the scenario file (default manifests/scenarios.yaml)' },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
} as const satisfies Flags;

export const predict: Command = {
  name: 'predict',
  summary: 'write your predictions before the run: at a terminal, or --template to fill in',
  flags: predictFlags,
  run: async (argv, io) => (await import('../../predict/command.ts')).createPredictCommand().run(argv, io),
};
