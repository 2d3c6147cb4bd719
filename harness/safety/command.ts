import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { EXIT, TermlabError } from '../errors.ts';
import { connect } from '../kube/index.ts';
import { ownershipOf, whoAmI } from './identity.ts';
import { defaultOwnerId, isLabelValue } from './labels.ts';
import { formatReap, reap } from './reap.ts';
import { reapAllCommand } from './reap-all-command.ts';

export const reapCommand: Command = {
  name: 'reap',
  summary: "delete this owner's leftover lab pods of runs that are no longer alive",
  usage: 'termlab reap [--context NAME | --kubeconfig FILE] [--namespace NS] [--owner ID] [--dry-run]\n             termlab reap --all-owners (--namespace NS | --class NAME) (--env NAME | --lab FILE) [--dry-run]   (instructor: every expired pod of the class)',
  async run(argv, io) {
    if (argv.includes('--all-owners')) return reapAllCommand(argv, io);
    const { values } = parseArgs({ args: argv, strict: true, options: {
      context: { type: 'string' }, kubeconfig: { type: 'string' }, namespace: { type: 'string' }, owner: { type: 'string' }, 'dry-run': { type: 'boolean' },
    } });
    const cluster = await connect({ kubeconfig: values.kubeconfig, context: values.context });
    const namespace = values.namespace ?? cluster.contextNamespace ?? 'default';
    if (values.owner !== undefined && !isLabelValue(values.owner)) throw new TermlabError('USAGE', `--owner: ${JSON.stringify(values.owner)} is not a valid label value`);
    // The same owner `termlab run` labels with: who the cluster says the caller is.
    const { owner } = ownershipOf(await whoAmI(cluster, io.signal), values.owner, () => defaultOwnerId(cluster.context, cluster.server));
    io.out(`reaping lab pods of owner ${owner} in ${namespace} on context "${cluster.context}"${values['dry-run'] ? ' (dry run)' : ''}\n`);
    const report = await reap(cluster, namespace, owner, { dryRun: values['dry-run'] });
    io.out(formatReap(report));
    return report.entries.some((e) => e.result === 'failed') ? EXIT.checksFailed : EXIT.ok;
  },
};
