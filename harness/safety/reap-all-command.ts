// `termlab reap --all-owners`: the instructor's (or the CronJob's) reaper for a whole class.
import type { CommandIO, Values } from '../../lib/command.ts';
import { EXIT, TermlabError } from '../../lib/errors.ts';
import { connect } from '../kube/index.ts';
import { environmentOf } from './environment.ts';
import { formatReapAll, reapAllOwners } from './reap-all.ts';
import { formatReapClass, reapClass } from './reap-class.ts';
import type { ReapAllFlags } from './flags.ts';

// The command as the CLI shows and parses it is harness/cli/commands/reap.ts.
export async function reapAllCommand(values: Values<ReapAllFlags>, io: CommandIO): Promise<number> {
  // A class-wide delete is never aimed by a default: the namespace (or class) and the environment are said.
  if (values.class && values.namespace)
    throw new TermlabError(
      'USAGE',
      '--class and --namespace: one or the other (--class takes every namespace labelled termlab.io/class=NAME)',
    );
  if (!values.namespace && !values.class)
    throw new TermlabError(
      'USAGE',
      "--all-owners needs --namespace NS or --class NAME: the class's namespace(s), said explicitly",
    );
  const env = await environmentOf(values);
  if (!env)
    throw new TermlabError(
      'USAGE',
      "--all-owners needs --env NAME or a --lab FILE with env: pods without the class's termlab.io/env label are never reaped",
    );
  const cluster = await connect({ kubeconfig: values.kubeconfig, context: values.context });
  if (values.class) {
    io.out(
      `reaping expired lab pods of every owner in the namespaces of class ${values.class}, environment ${env}, on context "${cluster.context}"${values['dry-run'] ? ' (dry run)' : ''}\n`,
    );
    const report = await reapClass(cluster, values.class, env, { dryRun: values['dry-run'], signal: io.signal });
    io.out(formatReapClass(report, values.class, env));
    return report.namespaces.some((n) => n.error || n.entries.some((e) => e.result === 'failed'))
      ? EXIT.checksFailed
      : EXIT.ok;
  }
  if (!values.namespace) throw new TermlabError('USAGE', '--all-owners needs --namespace NS');
  io.out(
    `reaping expired lab pods of every owner in ${values.namespace}, environment ${env}, on context "${cluster.context}"${values['dry-run'] ? ' (dry run)' : ''}\n`,
  );
  const entries = await reapAllOwners(cluster, values.namespace, env, { dryRun: values['dry-run'] });
  io.out(formatReapAll(entries, values.namespace, env));
  return entries.some((e) => e.result === 'failed') ? EXIT.checksFailed : EXIT.ok;
}
