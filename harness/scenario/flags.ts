// `termlab scenarios`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/scenarios.ts).
import type { Flags } from '../../lib/command.ts';
import { outputFlag } from '../../lib/output-format.ts';

export const scenariosFlags = {
  scenarios: { type: 'string', value: 'FILE', help: 'the scenario file (default manifests/scenarios.yaml)' },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
  reveal: { type: 'boolean', help: "also show the kubelet model's answer (after you have predicted)" },
  output: outputFlag('the scenarios'),
} as const satisfies Flags;
