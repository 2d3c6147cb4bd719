// `termlab predict`: the student's predictions, written before the run.
import { parseArgs } from 'node:util';
import { predictFlags } from '../../predict/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export const predict: Command = {
  name: 'predict',
  summary: 'write your predictions before the run: at a terminal, or --template to fill in',
  flags: predictFlags,
  async run(argv, io) {
    const { values, positionals } = parseArgs({ args: argv, strict: true, options: parseOptions(predictFlags) });
    return (await import('../../predict/command.ts')).createPredictCommand().run(values, positionals, io);
  },
};
