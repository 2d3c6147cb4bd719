// `termlab pack`: a run packed into one archive to hand in.
import { parseArgs } from 'node:util';
import { packFlags } from '../../pack/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export const pack: Command = {
  name: 'pack',
  summary: 'pack a run into one .tar.gz to hand in (observations, predictions, reports, a sha256 manifest)',
  forms: ['[RUN_DIR]'],
  flags: packFlags,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: parseOptions(packFlags),
    });
    return (await import('../../pack/command.ts')).packCommand.run(values, positionals, io);
  },
};
