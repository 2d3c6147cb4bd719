// `termlab sim`: the simulated cluster in the foreground. Its code is cluster/sim's, reached through
// the CLI's one door (loadSim in harness/cli/main.ts); this file says what the command is and parses its flags.
import type { CommandIO, CommandModule, Flags } from '../../../lib/command.ts';
import { FEATURE_GATES_FLAG, KUBE_VERSION_FLAG, PROXY_SYNC_DELAY_FLAG } from '../../run/flags.ts';
import { type Command, parseFlags } from '../command.ts';

export const simFlags = {
  port: { type: 'string', value: 'N', help: "the API server's port on 127.0.0.1 (default 0: any free port)" },
  'kubeconfig-out': {
    type: 'string',
    value: 'FILE',
    help: 'where to write the kubeconfig (default .termlab/sim/kubeconfig)',
  },
  'proxy-sync-delay-ms': PROXY_SYNC_DELAY_FLAG,
  'kube-version': KUBE_VERSION_FLAG,
  'feature-gates': FEATURE_GATES_FLAG,
  edge: {
    type: 'boolean',
    help: "install the edge (Traefik v3.7.13, simulated: manifests/edge/traefik.yaml's Gateway termlab-edge/edge and IngressClass traefik) and wait for it Ready",
  },
} as const satisfies Flags;

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('sim', simFlags, argv, io);

export function simCommand(load: () => Promise<{ simCommand: CommandModule<typeof simFlags> }>): Command {
  return {
    name: 'sim',
    summary: 'run the simulated cluster in the foreground (Ctrl-C stops it and every process it started)',
    flags: simFlags,
    examples: [
      { about: 'a simulated cluster for kubectl, until Ctrl-C', line: 'termlab sim' },
      {
        about: 'Kubernetes 1.36 on a fixed port, its proxies 500 ms late',
        line: 'termlab sim --kube-version 1.36 --port 6443 --proxy-sync-delay-ms 500',
      },
      { about: 'with the edge: route to your Services with an HTTPRoute or an Ingress', line: 'termlab sim --edge' },
    ],
    parse,
    async run(argv, io) {
      const { values, positionals } = parse(argv, io);
      return (await load()).simCommand.run(values, positionals, io);
    },
  };
}
