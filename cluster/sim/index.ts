// The simulated cluster as the rest of the project reaches it (the CLI's one door to cluster/sim opens here):
// start one in this process (cluster.ts), or run one in the foreground as `termlab sim` (command.ts).
export { type SimCluster, type SimOptions, startSimCluster, writeKubeconfigFile } from './cluster.ts';
export { simCommand } from './command.ts';
export type { ProxyConnection, ProxyTruth, ProxyViewChange } from './service-proxy.ts';
