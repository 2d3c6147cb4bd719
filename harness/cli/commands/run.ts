// `termlab run`: the lab on a cluster (or --sim, the simulated one), then observations, grades, reports.
import type { CommandIO } from '../../../lib/command.ts';
import type { StartSim } from '../../run/command.ts';
import { runFlags } from '../../run/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('run', runFlags, argv, io);

export function runCommand(startSim: StartSim): Command {
  return {
    name: 'run',
    summary: 'run the lab: delete pods during a request (or roll out a Deployment under load) and record what happens',
    flags: runFlags,
    examples: [
      {
        about: 'the lab on the simulated cluster, your sealed predictions graded',
        line: 'termlab run --sim --predictions predictions.yaml',
      },
      { about: 'the same, the answers shown without predictions', line: 'termlab run --sim --reveal' },
      {
        about: "a lab pair on your kubeconfig's cluster, in namespace lab, into a folder of your choosing",
        line: 'termlab run -n lab --only short-grace,restored-grace --output-dir reports/mine',
      },
      {
        about: 'the rollout lab on the simulated cluster',
        line: 'termlab run --sim --scenarios manifests/rollout.yaml',
      },
    ],
    parse,
    async run(argv, io) {
      const { values, positionals } = parse(argv, io);
      return (await import('../../run/command.ts')).createRunCommand(startSim).run(values, positionals, io);
    },
  };
}
