// `termlab verify`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/verify.ts).
import type { Flags } from '../../lib/command.ts';
import { outputFlag } from '../../lib/output-format.ts';
import { clusterFlags } from '../run/flags.ts';

export const verifyFlags = {
  ...clusterFlags,
  sim: { ...clusterFlags.sim, help: `${clusterFlags.sim.help}; it starts empty: give --apply` },
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NS',
    help: "the Deployment's namespace (default: the context's, else default)",
  },
  apply: {
    type: 'string',
    value: 'FILE',
    help: 'with --sim: create the objects in this YAML file (your Deployment, its Service) on the simulated cluster first',
  },
  service: {
    type: 'string',
    value: 'NAME',
    help: 'the Service the load goes through (default: the one that selects the pods; none: a temporary ClusterIP Service)',
  },
  port: { type: 'string', value: 'PORT', help: "the Service's port (default: its only one)" },
  via: {
    type: 'string',
    value: 'httproute/NAME|ingress/NAME',
    help: "send the load through the edge in front of this route (its Gateway's or Ingress's address, Host header), keeping connections alive; the edge's access log tells each failure's cause",
  },
  url: {
    type: 'string',
    value: 'URL',
    help: 'send the load through an edge termlab cannot read (a cloud load balancer), keeping connections alive; causes from the client side and the pods only',
  },
  method: {
    type: 'string',
    value: 'GET|POST',
    help: "the requests' method (default GET); a POST is not replayed by an edge when a kept-alive connection dies under it",
  },
  path: { type: 'string', value: 'PATH', help: 'what each request GETs (default /); the lab image: /work?ms=200' },
  rate: {
    type: 'string',
    value: 'N',
    help: 'requests per second (default 50), each on its own connection; with --via or --url over kept-alive ones',
  },
  connections: {
    type: 'string',
    value: 'N',
    help: "the most requests open at once; while that many are open, the next one waits, unsent (default: the rate times the path's ?ms= time or 1 s, plus 1 s; at least 32)",
  },
  'pod-header': {
    type: 'string',
    value: 'NAME',
    help: "the response header naming the answering pod's UID or name (default x-pod-uid, as the lab image sends)",
  },
  action: {
    type: 'string',
    value: 'rollout-restart|delete-pod',
    help: 'what to do under load (default rollout-restart)',
  },
  'max-failed': { type: 'string', value: 'N', help: 'pass with at most this many failed requests (default 0)' },
  'load-image': {
    type: 'string',
    value: 'IMAGE',
    help: "the load pod's image: the lab image's load mode (default termlab/lab-server:0.1.0)",
  },
  yes: { type: 'boolean', help: 'act without asking (required unless the cluster is the simulated one)' },
  owner: {
    type: 'string',
    value: 'ID',
    help: 'the owner label of the load pod (default: who the cluster says you are)',
  },
  'ready-timeout': {
    type: 'string',
    value: 'SECONDS',
    help: 'how long the Deployment, its endpoints and the load may take to be ready (default 120)',
  },
  'output-dir': {
    type: 'string',
    value: 'DIR',
    help: 'where the observation and reports go (default reports/verify-<run id>)',
    deprecated: ['--out'],
  },
  output: outputFlag('the verdict'),
  md: { type: 'string', value: 'FILE', help: 'also write the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)' },
  html: { type: 'string', value: 'FILE', help: 'also write the HTML report here' },
  junit: { type: 'string', value: 'FILE', help: 'also write the JUnit XML here' },
} as const satisfies Flags;
