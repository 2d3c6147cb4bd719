// `termlab class student NAME`: the instructor makes one student's identity and kubeconfig.
import type { Command, Flags } from '../command.ts';

export const classFlags = {
  namespace: {
    type: 'string',
    value: 'NS',
    help: "the class's namespace from manifests/class.yaml; the student gets NS-NAME with 1/seats of its quota",
  },
  out: { type: 'string', short: 'o', value: 'FILE', help: "where the student's kubeconfig is written (mode 0600)" },
  context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: the current one)' },
  kubeconfig: { type: 'string', value: 'FILE', help: 'the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)' },
  hours: {
    type: 'string',
    value: 'N',
    help: 'the token expires after --hours N: default 24, at most 168 (a bounded token, never a forever one)',
  },
  force: { type: 'boolean', help: 'replace an existing -o FILE' },
} as const satisfies Flags;

export const classCommand: Command = {
  name: 'class',
  summary:
    'a class on one cluster: make a student identity and its kubeconfig (instructor; exit 2 bad input, 3 no cluster or class)',
  forms: ['student NAME'],
  flags: classFlags,
  run: async (argv, io) => (await import('../../class/student-command.ts')).classCommand.run(argv, io),
};
