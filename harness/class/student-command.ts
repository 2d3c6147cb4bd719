// `termlab class student NAME --namespace NS --output-file FILE`: the instructor makes one student's identity
// and writes the kubeconfig to hand them. `termlab class` holds the class-on-a-cluster commands.
import { open, rm } from 'node:fs/promises';
import type { CommandIO, CommandModule, Values } from '../../lib/command.ts';
import { EXIT, TermlabError, unwritable } from '../../lib/errors.ts';
import { connect } from '../kube/index.ts';
import type { classFlags } from './flags.ts';
import { addStudent, checkStudentName, DEFAULT_TOKEN_HOURS, MAX_TOKEN_HOURS } from './student.ts';
import { clusterOf, renderStudentKubeconfig } from './student-kubeconfig.ts';

// The command as the CLI shows and parses it (`class` and its one subcommand) is harness/cli/commands/class.ts.
export const studentCommand: CommandModule<typeof classFlags> = { run: makeStudent };

async function makeStudent(values: Values<typeof classFlags>, positionals: string[], io: CommandIO): Promise<number> {
  if (positionals.length !== 1)
    throw new TermlabError(
      'USAGE',
      positionals.length
        ? `one student NAME, got ${positionals.length}: ${positionals.join(' ')}`
        : 'the student NAME is needed: termlab class student NAME --namespace NS --output-file FILE',
    );
  const name = positionals[0]!;
  if (!values.namespace)
    throw new TermlabError(
      'USAGE',
      "--namespace NS is needed: the class's namespace from manifests/class.yaml, said explicitly",
    );
  const out = values['output-file'];
  if (!out) throw new TermlabError('USAGE', "--output-file FILE is needed: where the student's kubeconfig is written");
  const hoursText = values.hours ?? String(DEFAULT_TOKEN_HOURS);
  if (!/^\d+$/.test(hoursText) || Number(hoursText) < 1 || Number(hoursText) > MAX_TOKEN_HOURS)
    throw new TermlabError(
      'USAGE',
      `--hours: a whole number from 1 to ${MAX_TOKEN_HOURS}, got ${JSON.stringify(hoursText)}`,
    );
  // The name and the file are checked before the cluster is asked anything.
  checkStudentName(name, values.namespace);
  const file = await openOutput(out, Boolean(values.force));
  let written = false;
  try {
    const cluster = await connect({ kubeconfig: values.kubeconfig, context: values.context });
    const current = cluster.kc.getCurrentCluster()!;
    const student = await addStudent(cluster, {
      classNamespace: values.namespace,
      name,
      hours: Number(hoursText),
      signal: io.signal,
    });
    const text = renderStudentKubeconfig({
      cluster: clusterOf(current),
      student: name,
      namespace: student.namespace,
      token: student.token,
      expiresAt: student.expiresAt,
    });
    try {
      await file.truncate(0);
      await file.write(text, 0);
    } catch (error) {
      throw unwritable('OUTPUT_UNWRITABLE', 'the kubeconfig', out, error);
    }
    written = true;
    for (const what of student.created) io.out(`created ${what}\n`);
    for (const what of student.kept) io.out(`kept    ${what} (already there)\n`);
    io.out(
      `quota of ${student.namespace}: ${Object.entries(student.quota)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')} (1/${student.seats} of the class's)\n`,
    );
    io.out(
      `wrote ${out}: user ${student.username}, namespace ${student.namespace}; the token expires ${student.expiresAt} (${Math.round(student.expirationSeconds / 360) / 10} h)\n`,
    );
    return EXIT.ok;
  } finally {
    await file.close();
    if (!written && file.fresh) await rm(out, { force: true });
  }
}

/** Opened before the cluster is touched, so a bad path fails first; an existing file only with --force. */
async function openOutput(
  path: string,
  force: boolean,
): Promise<Awaited<ReturnType<typeof open>> & { fresh: boolean }> {
  try {
    const handle = await open(path, 'wx', 0o600);
    return Object.assign(handle, { fresh: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && !force)
      throw new TermlabError(
        'USAGE',
        `--output-file ${path}: the file exists; --force replaces it (the old token stays valid until it expires)`,
        { path },
      );
    if (code !== 'EEXIST') throw unwritable('OUTPUT_UNWRITABLE', 'the kubeconfig', path, error);
    try {
      const handle = await open(path, 'r+', 0o600);
      await handle.chmod(0o600);
      return Object.assign(handle, { fresh: false });
    } catch (again) {
      throw unwritable('OUTPUT_UNWRITABLE', 'the kubeconfig', path, again);
    }
  }
}
