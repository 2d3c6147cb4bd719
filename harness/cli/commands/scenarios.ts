// `termlab scenarios`: the scenarios' setups, the model's answer only on request.
import type { Command, Flags } from '../command.ts';

export const scenariosFlags = {
  scenarios: { type: 'string', value: 'FILE', help: 'the scenario file (default manifests/scenarios.yaml)' },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
  reveal: { type: 'boolean', help: "also show the kubelet model's answer (after you have predicted)" },
  json: { type: 'boolean', help: 'print JSON instead of text' },
} as const satisfies Flags;

export const scenarios: Command = {
  name: 'scenarios',
  summary: "list the scenarios' setups (the kubelet model's answer only with --reveal)",
  flags: scenariosFlags,
  run: async (argv, io) => (await import('../../scenario/command.ts')).scenariosCommand.run(argv, io),
};
