// `termlab run`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/run.ts).
import type { Flags } from '../../lib/command.ts';

/**
 * The flags `termlab run` and `termlab verify` share, word for word: which cluster (or the simulated one, and
 * how it is started) and how long its API may stay away. Both tables spread this one.
 */
export const clusterFlags = {
  sim: { type: 'boolean', help: 'start a simulated cluster for this run (no Kubernetes needed)' },
  verbose: {
    type: 'boolean',
    help: 'not at a terminal: a line for every phase of every scenario, not only one as each finishes',
  },
  context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: the current one)' },
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'the kubeconfig file (default: $KUBECONFIG or ~/.kube/config; a `termlab sim` writes .termlab/sim/kubeconfig)',
  },
  'api-patience': {
    type: 'string',
    value: 'SECONDS',
    help: "how long the cluster's API may stay away before the run gives up (default 60)",
  },
  'sim-proxy-delay': {
    type: 'string',
    value: 'MS',
    help: 'with --sim: the simulated service proxy applies endpoint changes this late',
  },
  'kube-version': {
    type: 'string',
    value: '1.35|1.36|1.37|1.38',
    help: 'with --sim: the Kubernetes minor to emulate (default 1.37; 1.34 kept; 1.38 is v1.38.0-beta.0)',
  },
  'feature-gates': {
    type: 'string',
    value: 'Name=bool,...',
    help: "with --sim: the simulated cluster's feature gates, e.g. ContainerStopSignals=true",
  },
} as const satisfies Flags;

export const runFlags = {
  ...clusterFlags,
  namespace: { type: 'string', value: 'NS', help: "the namespace (default: the context's, else default)" },
  scenarios: {
    type: 'string',
    value: 'FILE',
    help: 'the scenario file (default manifests/scenarios.yaml; manifests/rollout.yaml for rollouts)',
  },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
  out: {
    type: 'string',
    value: 'DIR',
    help: 'the run directory (default reports/<run id>, and reports/latest points at it)',
  },
  parallel: { type: 'string', value: 'N', help: 'scenarios at once (default 8; rollouts 1)' },
  image: { type: 'string', value: 'IMAGE', help: 'the lab server image (default termlab/lab-server:0.1.0)' },
  transport: {
    type: 'string',
    value: 'portforward|direct',
    help: "how the request reaches the pod (default portforward; direct: the pod's IP)",
  },
  owner: {
    type: 'string',
    value: 'ID',
    help: "the owner label of the run's pods (default: who the cluster says you are, by a SelfSubjectReview)",
  },
  predictions: {
    type: 'string',
    value: 'FILE',
    help: 'the predictions made before the run: sealed into the run before its first pod, graded beside the results',
  },
  reveal: {
    type: 'boolean',
    help: "show the outcomes, exit codes, verdicts and the kubelet model's answers with no predictions sealed (after you have predicted)",
  },
  'max-pods': { type: 'string', value: 'N', help: 'at most this many lab pods of yours at once (default 8)' },
  'ready-timeout': { type: 'string', value: 'SECONDS', help: 'how long a pod may take to become Ready (default 120)' },
  env: { type: 'string', value: 'NAME', help: 'the class environment the run belongs to' },
  lab: { type: 'string', value: 'FILE', help: 'the lab definition naming the class environment' },
  retries: {
    type: 'string',
    value: 'N',
    help: 'runs again on a fresh pod a scenario whose request the harness lost, at most N times (default 1)',
  },
  'quota-wait': {
    type: 'string',
    value: 'SECONDS',
    help: "how long a pod may wait for room in the class's ResourceQuota, with backoff, before the run ends with exit 3 (default 120)",
  },
} as const satisfies Flags;
