import { parseArgs } from 'node:util';
import { type CommandModule, parseOptions } from '../command.ts';
import { packFlags } from '../commands/pack.ts';
import { EXIT } from '../errors.ts';
import { terminalText } from '../class/escape.ts';
import { packRun } from './pack.ts';

// The command as the CLI shows it is commands/pack.ts.
export const packCommand: CommandModule = {
  async run(argv, io) {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: parseOptions(packFlags) });
    const runDir = positionals[0] ?? 'reports/latest';
    const { archive, manifest, predictions, predictedStudent } = await packRun(runDir, { out: values.out, predictions: values.predictions, student: values.student });
    // The gradebook names a hand-in by its predictions' student first: say so when --student disagrees.
    const student = predictedStudent ?? manifest.student;
    io.out(`packed ${manifest.files.length} file(s) of run ${manifest.runIds.join(', ')} for ${student === null ? 'an unnamed student (add --student or a predictions file)' : terminalText(student)}\n`);
    if (predictedStudent && manifest.student && predictedStudent !== manifest.student) {
      io.err(`termlab pack: ⚠ --student ${JSON.stringify(terminalText(manifest.student))} differs from the student ${JSON.stringify(terminalText(predictedStudent))} named in ${terminalText(predictions ?? '')}: the gradebook takes the predictions' name and flags the difference for review\n`);
    }
    io.out(predictions ? `with the predictions in ${predictions}\n` : 'with no predictions file (none in the run directory or here; --predictions FILE)\n');
    io.out(`${archive}\n`);
    return EXIT.ok;
  },
};
