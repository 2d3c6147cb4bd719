// `termlab run`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/run.ts).
import type { Flag, Flags } from '../../lib/command.ts';

/** The Kubernetes minor the simulated cluster emulates: `termlab sim`'s flag, and run's and verify's with --sim. */
export const KUBE_VERSION_FLAG = {
  type: 'string',
  value: '1.35|1.36|1.37|1.38',
  help: 'the Kubernetes minor to emulate: 1.35, 1.36, 1.37 (the default) or 1.38 (v1.38.0-beta.0); 1.34 also works, for old recordings',
} as const satisfies Flag;

/** The API server's and kubelet's feature gates, as their --feature-gates flag takes them. */
export const FEATURE_GATES_FLAG = {
  type: 'string',
  value: 'Name=bool,...',
  help: "feature gates, e.g. ContainerStopSignals=true (that minor's defaults otherwise)",
} as const satisfies Flag;

/** One setting, one name: `termlab sim`'s flag, and run's and verify's with --sim. */
export const PROXY_SYNC_DELAY_FLAG = {
  type: 'string',
  value: 'MS',
  help: 'the simulated service proxy applies endpoint changes this many ms late (0-60000)',
} as const satisfies Flag;

/**
 * The flags `termlab run` and `termlab verify` share, word for word: which cluster (or the simulated one, and
 * how it is started) and how long its API may stay away. Both tables spread this one.
 */
export const clusterFlags = {
  sim: { type: 'boolean', help: 'start a simulated cluster for this run (no Kubernetes needed)' },
  verbose: {
    type: 'boolean',
    help: 'when the output is not a terminal: a line for every phase of every scenario, not just one as each ends',
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
  'proxy-sync-delay-ms': {
    ...PROXY_SYNC_DELAY_FLAG,
    help: `with --sim: ${PROXY_SYNC_DELAY_FLAG.help}`,
    deprecated: ['--sim-proxy-delay'],
  },
  'feature-gates': { ...FEATURE_GATES_FLAG, help: `with --sim: ${FEATURE_GATES_FLAG.help}` },
  'kube-version': { ...KUBE_VERSION_FLAG, help: `with --sim: ${KUBE_VERSION_FLAG.help}` },
} as const satisfies Flags;

export const runFlags = {
  ...clusterFlags,
  namespace: { type: 'string', short: 'n', value: 'NS', help: "the namespace (default: the context's, else default)" },
  scenarios: {
    type: 'string',
    value: 'FILE',
    help: 'the scenario file (default manifests/scenarios.yaml; manifests/rollout.yaml for rollouts)',
  },
  only: { type: 'string', value: 'a,b', help: 'only these scenarios, by name' },
  'output-dir': {
    type: 'string',
    value: 'DIR',
    help: 'the run directory (default reports/<run id>, and reports/latest points at it)',
    deprecated: ['--out'],
  },
  parallel: { type: 'string', value: 'N', help: 'how many scenarios run at once (default 8; 1 for rollouts)' },
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
