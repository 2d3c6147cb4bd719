// `termlab class student NAME`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/class.ts).
import type { Flags } from '../../lib/command.ts';

export const classFlags = {
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NS',
    help: "the class's namespace from manifests/class.yaml; the student gets NS-NAME with 1/seats of its quota; the witness's records are in NS-witness (witness export: default termlab)",
  },
  'output-file': {
    type: 'string',
    value: 'FILE',
    help: "where the student's kubeconfig is written (mode 0600), or the witness export (JSON)",
    deprecated: ['--out', '-o'],
  },
  context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: the current one)' },
  kubeconfig: { type: 'string', value: 'FILE', help: 'the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)' },
  hours: {
    type: 'string',
    value: 'N',
    help: 'the token expires after --hours N: default 24, at most 168 (a bounded token, never a forever one)',
  },
  force: { type: 'boolean', help: 'replace an existing --output-file FILE' },
} as const satisfies Flags;
