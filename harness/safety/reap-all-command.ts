// `termlab reap --all-owners`: the instructor's (or the CronJob's) reaper for a whole class.
import { parseArgs } from 'node:util';
import { type CommandIO, parseOptions, pickFlags } from '../command.ts';
import { REAP_ALL_FLAGS, reapFlags } from '../commands/reap.ts';
import { EXIT, TermlabError } from '../errors.ts';
import { connect } from '../kube/index.ts';
import { environmentOf } from './environment.ts';
import { formatReapAll, reapAllOwners } from './reap-all.ts';

export async function reapAllCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: parseOptions(pickFlags(reapFlags, REAP_ALL_FLAGS)) });
  // A class-wide delete is never aimed by a default: the namespace and the environment are said.
  if (!values.namespace) throw new TermlabError('USAGE', '--all-owners needs --namespace NS: the class\'s namespace, said explicitly');
  const env = await environmentOf(values);
  if (!env) throw new TermlabError('USAGE', '--all-owners needs --env NAME or a --lab FILE with env: pods without the class\'s termlab.io/env label are never reaped');
  const cluster = await connect({ kubeconfig: values.kubeconfig, context: values.context });
  io.out(`reaping expired lab pods of every owner in ${values.namespace}, environment ${env}, on context "${cluster.context}"${values['dry-run'] ? ' (dry run)' : ''}\n`);
  const entries = await reapAllOwners(cluster, values.namespace, env, { dryRun: values['dry-run'] });
  io.out(formatReapAll(entries, values.namespace, env));
  return entries.some((e) => e.result === 'failed') ? EXIT.checksFailed : EXIT.ok;
}
