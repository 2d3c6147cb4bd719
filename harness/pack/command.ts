import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { EXIT } from '../errors.ts';
import { terminalText } from '../class/escape.ts';
import { packRun } from './pack.ts';

export const packCommand: Command = {
  name: 'pack',
  summary: 'pack a run into one .tar.gz to hand in (observations, predictions, reports, a sha256 manifest)',
  usage: 'termlab pack [RUN_DIR] [-o FILE] [--predictions FILE] [--student NAME]',
  async run(argv, io) {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: {
      out: { type: 'string', short: 'o' }, predictions: { type: 'string' }, student: { type: 'string' },
    } });
    const runDir = positionals[0] ?? 'reports/latest';
    const { archive, manifest, predictions, seal, ignoredPredictions, predictedStudent } = await packRun(runDir, { out: values.out, predictions: values.predictions, student: values.student });
    // The gradebook names a hand-in by its predictions' student first: say so when --student disagrees.
    const student = predictedStudent ?? manifest.student;
    io.out(`packed ${manifest.files.length} file(s) of run ${manifest.runIds.join(', ')} for ${student === null ? 'an unnamed student (add --student or a predictions file)' : terminalText(student)}\n`);
    if (predictedStudent && manifest.student && predictedStudent !== manifest.student) {
      io.err(`termlab pack: ⚠ --student ${JSON.stringify(terminalText(manifest.student))} differs from the student ${JSON.stringify(terminalText(predictedStudent))} named in ${terminalText(predictions ?? '')}: the gradebook takes the predictions' name and flags the difference for review\n`);
    }
    if (seal === 'sealed') io.out(`with the predictions the run sealed before its first pod (${terminalText(predictions ?? '')})\n`);
    else if (seal === 'unsealed') io.err(`termlab pack: ⚠ the run was started without --predictions: ${terminalText(predictions ?? '')} is packed, but not sealed by the run, and the gradebook flags it for review\n`);
    else io.err('termlab pack: ⚠ no predictions: the run was started without --predictions and none is in the run directory or here; the gradebook flags it for review\n');
    if (ignoredPredictions) io.err(`termlab pack: ${terminalText(ignoredPredictions)} is not the predictions file the run sealed; the sealed one is packed\n`);
    io.out(`${archive}\n`);
    return EXIT.ok;
  },
};
