// `termlab class witness export --output-file FILE`: the class's witness records, read with the instructor's kubeconfig,
// written to one JSON file (docs/witness.schema.json) so a class can be regraded with no cluster:
// `termlab grade ... --witness-file FILE`.
import type { CommandIO, CommandModule, Values } from '../../lib/command.ts';
import { TermlabError } from '../../lib/errors.ts';
import { escapeTerminal } from '../../lib/terminal.ts';
import { writeReport } from '../report/write.ts';
import type { classFlags } from './flags.ts';
import { readWitnessFromCluster } from './witness-cluster.ts';

export const witnessCommand: CommandModule<typeof classFlags> = { run: exportWitness };

async function exportWitness(values: Values<typeof classFlags>, positionals: string[], io: CommandIO): Promise<number> {
  if (positionals.length !== 1 || positionals[0] !== 'export')
    throw new TermlabError(
      'USAGE',
      positionals.length
        ? `unknown witness subcommand ${JSON.stringify(positionals.join(' '))}: the one there is, is export`
        : 'a witness subcommand is needed: termlab class witness export --output-file FILE.json',
    );
  const out = values['output-file'];
  if (!out)
    throw new TermlabError('USAGE', '--output-file FILE is needed: where the witness records are written (JSON)');
  if (values.hours !== undefined) throw new TermlabError('USAGE', '--hours is for `class student`, not the witness');
  const book = await readWitnessFromCluster({
    kubeconfig: values.kubeconfig,
    context: values.context,
    classNamespace: values.namespace ?? 'termlab',
    signal: io.signal,
  });
  await writeReport(out, `${JSON.stringify(book, null, 1)}\n`, 'the witness export');
  io.out(
    `${book.records.length} pod record(s) from ${escapeTerminal(book.namespace)} on ${escapeTerminal(book.cluster.context)} written to ${escapeTerminal(out)}\n`,
  );
  return 0;
}
