// `termlab pack`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/pack.ts).
import type { Flags } from '../../lib/command.ts';

export const packFlags = {
  'output-file': {
    type: 'string',
    value: 'FILE',
    help: "the archive to write (default: RUN.tar.gz in the current directory, RUN the run directory's name)",
    deprecated: ['--out', '-o'],
  },
  predictions: {
    type: 'string',
    value: 'FILE',
    help: 'a predictions file to pack when the run sealed none (default: the one in the run directory)',
  },
  student: { type: 'string', value: 'NAME', help: "the student's name, when no sealed predictions name one" },
} as const satisfies Flags;
