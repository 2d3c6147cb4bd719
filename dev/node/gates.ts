// Feature gates for the node: `--feature-gates ContainerStopSignals=true,…`, as the components take them.
// Given to every component (the API server keeps or drops gated fields, the kubelet acts on them; the
// others take the same set so that no component disagrees about a gate).
import { TermlabError } from '../../lib/errors.ts';

export type FeatureGates = Record<string, boolean>;

/** `A=true,B=false` -> { A: true, B: false }; anything else is a USAGE error naming the flag and the pair. */
export function parseFeatureGates(given: string | undefined, flag = '--feature-gates'): FeatureGates {
  const gates: FeatureGates = {};
  if (given === undefined || given.trim() === '') return gates;
  for (const pair of given.split(',')) {
    const match = /^\s*([A-Z][A-Za-z0-9]*)=(true|false)\s*$/.exec(pair);
    if (!match)
      throw new TermlabError(
        'USAGE',
        `${flag}: expected Name=true or Name=false pairs separated by commas (e.g. ContainerStopSignals=true), got ${JSON.stringify(pair)}`,
      );
    if (match[1]! in gates) throw new TermlabError('USAGE', `${flag}: ${match[1]} is given twice`);
    gates[match[1]!] = match[2] === 'true';
  }
  return gates;
}

/** The flag as kube-apiserver, the controller manager, the scheduler and kube-proxy take it; none when empty. */
export function featureGatesArgs(gates: FeatureGates): string[] {
  const pairs = Object.entries(gates).map(([name, on]) => `${name}=${on}`);
  return pairs.length ? [`--feature-gates=${pairs.join(',')}`] : [];
}

/** One line for logs and the state file: `ContainerStopSignals=true`, or `none`. */
export const describeGates = (gates: FeatureGates): string =>
  Object.entries(gates)
    .map(([name, on]) => `${name}=${on}`)
    .join(',') || 'none';
