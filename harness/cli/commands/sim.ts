// `termlab sim`: the simulated cluster in the foreground. Its code is cluster/sim's, reached through
// the CLI's one door (loadSim in harness/cli/main.ts); this file says what the command is and parses its flags.
import { parseArgs } from 'node:util';
import type { CommandModule, Flags } from '../../../lib/command.ts';
import { type Command, parseOptions } from '../command.ts';

export const simFlags = {
  port: { type: 'string', value: 'N', help: "the API server's port on 127.0.0.1 (default 0: any free port)" },
  'kubeconfig-out': {
    type: 'string',
    value: 'FILE',
    help: 'where to write the kubeconfig (default .termlab/sim/kubeconfig)',
  },
  'proxy-sync-delay-ms': {
    type: 'string',
    value: 'N',
    help: 'the simulated service proxy applies endpoint changes this many ms late (0-60000)',
  },
  'kube-version': {
    type: 'string',
    value: '1.35|1.36|1.37|1.38',
    help: 'the Kubernetes minor to emulate (default 1.37; 1.34 kept; 1.38 is v1.38.0-beta.0)',
  },
  'feature-gates': {
    type: 'string',
    value: 'Name=bool,...',
    help: "the API server's and kubelet's feature gates, e.g. ContainerStopSignals=true (that minor's defaults otherwise)",
  },
} as const satisfies Flags;

export function simCommand(load: () => Promise<{ simCommand: CommandModule<typeof simFlags> }>): Command {
  return {
    name: 'sim',
    summary: 'run the simulated cluster in the foreground (Ctrl-C stops it and every process it started)',
    flags: simFlags,
    async run(argv, io) {
      const { values, positionals } = parseArgs({ args: argv, strict: true, options: parseOptions(simFlags) });
      return (await load()).simCommand.run(values, positionals, io);
    },
  };
}
