import { parseArgs } from 'node:util';
import { type CommandModule, parseOptions, pickFlags } from '../cli/command.ts';
import { REAP_OWN_FLAGS, reapFlags } from '../cli/commands/reap.ts';
import { EXIT, TermlabError } from '../../lib/errors.ts';
import { connect } from '../kube/index.ts';
import { ownershipOf, whoAmI } from './identity.ts';
import { defaultOwnerId, isLabelValue } from './labels.ts';
import { formatReap, reap } from './reap.ts';
import { reapAllCommand } from './reap-all-command.ts';

// The command as the CLI shows it is commands/reap.ts.
export const reapCommand: CommandModule = {
  async run(argv, io) {
    if (argv.includes('--all-owners')) return reapAllCommand(argv, io);
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: parseOptions(pickFlags(reapFlags, REAP_OWN_FLAGS)),
    });
    const cluster = await connect({ kubeconfig: values.kubeconfig, context: values.context });
    const namespace = values.namespace ?? cluster.contextNamespace ?? 'default';
    if (values.owner !== undefined && !isLabelValue(values.owner))
      throw new TermlabError('USAGE', `--owner: ${JSON.stringify(values.owner)} is not a valid label value`);
    // The same owner `termlab run` labels with: who the cluster says the caller is.
    const { owner } = ownershipOf(await whoAmI(cluster, io.signal), values.owner, () =>
      defaultOwnerId(cluster.context, cluster.server),
    );
    io.out(
      `reaping lab pods of owner ${owner} in ${namespace} on context "${cluster.context}"${values['dry-run'] ? ' (dry run)' : ''}\n`,
    );
    const report = await reap(cluster, namespace, owner, { dryRun: values['dry-run'] });
    io.out(formatReap(report));
    return report.entries.some((e) => e.result === 'failed') ? EXIT.checksFailed : EXIT.ok;
  },
};
