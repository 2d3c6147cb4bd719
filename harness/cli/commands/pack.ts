// `termlab pack`: a run packed into one archive to hand in.
import type { Command, Flags } from '../command.ts';

export const packFlags = {
  out: { type: 'string', short: 'o', value: 'FILE', help: 'the archive to write (default: beside the run directory)' },
  predictions: {
    type: 'string',
    value: 'FILE',
    help: 'a predictions file to pack when the run sealed none (default: the one in the run directory or here)',
  },
  student: { type: 'string', value: 'NAME', help: "the student's name, when no predictions file names it" },
} as const satisfies Flags;

export const pack: Command = {
  name: 'pack',
  summary: 'pack a run into one .tar.gz to hand in (observations, predictions, reports, a sha256 manifest)',
  forms: ['[RUN_DIR]'],
  flags: packFlags,
  run: async (argv, io) => (await import('../../pack/command.ts')).packCommand.run(argv, io),
};
