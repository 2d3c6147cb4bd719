// `termlab scenarios`: the scenarios' setups, the model's answer only on request.
import type { CommandIO } from '../../../lib/command.ts';
import { scenariosFlags } from '../../scenario/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('scenarios', scenariosFlags, argv, io);

export const scenarios: Command = {
  name: 'scenarios',
  summary: "list the scenarios' setups (the kubelet model's answer only with --reveal)",
  flags: scenariosFlags,
  examples: [
    { about: "the lab's scenarios, without the answers", line: 'termlab scenarios' },
    { about: 'the sidecar scenarios as YAML', line: 'termlab scenarios --scenarios manifests/sidecars.yaml -o yaml' },
    {
      about: "two scenarios with the model's answers (after you have predicted)",
      line: 'termlab scenarios --only short-grace,restored-grace --reveal',
    },
  ],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../scenario/command.ts')).scenariosCommand.run(values, positionals, io);
  },
};
