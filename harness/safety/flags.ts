// `termlab reap`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/reap.ts).
import type { Flags } from '../../lib/command.ts';

export const reapFlags = {
  context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: the current one)' },
  kubeconfig: { type: 'string', value: 'FILE', help: 'the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)' },
  namespace: { type: 'string', short: 'n', value: 'NS', help: "the namespace (default: the context's, else default)" },
  owner: {
    type: 'string',
    value: 'ID',
    help: 'whose pods (default: yours: who the cluster says you are, by a SelfSubjectReview)',
  },
  'dry-run': { type: 'boolean', help: 'say what would be deleted, delete nothing' },
  'all-owners': {
    type: 'boolean',
    help: "instructor: every expired lab pod in the namespace, whoever's (needs --namespace and --env or --lab)",
  },
  class: {
    type: 'string',
    value: 'NAME',
    help: 'with --all-owners: every namespace labelled termlab.io/class=NAME (the class made by manifests/class.yaml), instead of --namespace',
  },
  env: { type: 'string', value: 'NAME', help: 'with --all-owners: the environment the class runs in' },
  lab: { type: 'string', value: 'FILE', help: "with --all-owners: the lab definition naming the class's environment" },
} as const satisfies Flags;

/** Each form parses only its own flags. */
export const REAP_OWN_FLAGS = ['context', 'kubeconfig', 'namespace', 'owner', 'dry-run'] as const;
export const REAP_ALL_FLAGS = [
  'all-owners',
  'context',
  'kubeconfig',
  'namespace',
  'class',
  'env',
  'lab',
  'dry-run',
] as const;

/** The flags of each form. */
export type ReapOwnFlags = Pick<typeof reapFlags, (typeof REAP_OWN_FLAGS)[number]>;
export type ReapAllFlags = Pick<typeof reapFlags, (typeof REAP_ALL_FLAGS)[number]>;
