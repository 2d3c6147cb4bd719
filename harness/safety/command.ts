import type { CommandModule } from '../../lib/command.ts';
import { EXIT, TermlabError } from '../../lib/errors.ts';
import { connect } from '../kube/index.ts';
import { ownershipOf, whoAmI } from './identity.ts';
import { defaultOwnerId, isLabelValue } from './labels.ts';
import { formatReap, reap } from './reap.ts';
import type { ReapOwnFlags } from './flags.ts';

// `termlab reap`, this owner's form; the command as the CLI shows and parses it is harness/cli/commands/reap.ts.
export const reapCommand: CommandModule<ReapOwnFlags> = {
  async run(values, _positionals, io) {
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
