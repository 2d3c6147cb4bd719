// `termlab pack`: a run packed into one archive to hand in.
import type { CommandIO } from '../../../lib/command.ts';
import { packFlags } from '../../pack/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('pack', packFlags, argv, io, true);

export const pack: Command = {
  name: 'pack',
  summary: 'pack a run into one .tar.gz to hand in (observations, predictions, reports, a sha256 manifest)',
  forms: ['[RUN_DIR]'],
  flags: packFlags,
  examples: [
    { about: 'the last run, into <its name>.tar.gz here', line: 'termlab pack' },
    {
      about: 'a run of your choosing, into a file you name',
      line: 'termlab pack reports/mine --output-file alice.tar.gz',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../pack/command.ts')).packCommand.run(values, positionals, io);
  },
};
