// `termlab predict`: the student's predictions, written before the run.
import type { CommandIO } from '../../../lib/command.ts';
import { predictFlags } from '../../predict/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('predict', predictFlags, argv, io);

export const predict: Command = {
  name: 'predict',
  summary: 'write your predictions before the run: at a terminal, or --template to fill in',
  flags: predictFlags,
  examples: [
    { about: 'asked at the terminal, written to predictions.yaml', line: 'termlab predict --student alice' },
    {
      about: 'a template for the sidecar scenarios, to fill in with an editor',
      line: 'termlab predict --template --scenarios manifests/sidecars.yaml --output-file sidecars.yaml',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../predict/command.ts')).createPredictCommand().run(values, positionals, io);
  },
};
