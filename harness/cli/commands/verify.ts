// `termlab verify deployment/NAME`: the lab's evidence for a team's own Deployment — roll it (or
// delete one pod) under load through its Service and learn whether any request failed, and why.
import type { CommandIO } from '../../../lib/command.ts';
import type { StartSim } from '../../run/command.ts';
import { verifyFlags } from '../../verify/flags.ts';
import { type Command, parseFlags } from '../command.ts';

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('verify', verifyFlags, argv, io, true);

export function verifyCommand(startSim: StartSim): Command {
  return {
    name: 'verify',
    summary:
      'roll your own Deployment under load through its Service: did any request fail, at which pod, why, and what would have saved it',
    forms: ['deployment/NAME'],
    flags: verifyFlags,
    examples: [
      {
        about: "the project's example on the simulated cluster",
        line: "termlab verify deployment/web --sim --apply manifests/verify-example.yaml --path '/work?ms=200'",
      },
      {
        about: "through the Gateway in front of HTTPRoute web, reading the edge's access log (docs/verify.md)",
        line: 'termlab verify deployment/web -n shop --via httproute/web --path /healthz --yes',
      },
      {
        about: 'your Deployment in namespace shop on a real cluster, the verdict as JSON',
        line: 'termlab verify deployment/api -n shop --path /healthz --yes -o json --output-dir reports/api',
      },
    ],
    parse,
    async run(argv, io) {
      const { values, positionals } = parse(argv, io);
      return (await import('../../verify/command.ts')).createVerifyCommand(startSim).run(values, positionals, io);
    },
  };
}
