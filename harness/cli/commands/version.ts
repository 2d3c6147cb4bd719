// `termlab version`: the harness's version and the Kubernetes minors its grader knows (`--version`: the number alone).
import type { CommandIO } from '../../../lib/command.ts';
import { versionFlags } from '../../version/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('version', versionFlags, argv, io);

export const version: Command = {
  name: 'version',
  summary: "print termlab's version and the Kubernetes minors the grader's kubelet model knows",
  flags: versionFlags,
  examples: [
    { about: 'the versions, in words', line: 'termlab version' },
    { about: 'the same for a script', line: 'termlab version -o json' },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../version/command.ts')).versionCommand.run(values, positionals, io);
  },
};
