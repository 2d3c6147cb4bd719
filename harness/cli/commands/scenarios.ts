// `termlab scenarios`: the scenarios' setups, the model's answer only on request.
import { parseArgs } from 'node:util';
import { scenariosFlags } from '../../scenario/flags.ts';
import { type Command, parseOptions } from '../command.ts';

export const scenarios: Command = {
  name: 'scenarios',
  summary: "list the scenarios' setups (the kubelet model's answer only with --reveal)",
  flags: scenariosFlags,
  async run(argv, io) {
    const { values, positionals } = parseArgs({ args: argv, strict: true, options: parseOptions(scenariosFlags) });
    return (await import('../../scenario/command.ts')).scenariosCommand.run(values, positionals, io);
  },
};
