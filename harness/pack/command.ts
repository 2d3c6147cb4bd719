import type { CommandModule } from '../../lib/command.ts';
import { EXIT } from '../../lib/errors.ts';
import { escapeTerminal } from '../../lib/terminal.ts';
import type { packFlags } from './flags.ts';
import { packRun } from './pack.ts';

// The command as the CLI shows and parses it is harness/cli/commands/pack.ts.
export const packCommand: CommandModule<typeof packFlags> = {
  async run(values, positionals, io) {
    const runDir = positionals[0] ?? 'reports/latest';
    const { archive, manifest, predictions, seal, predictedStudent } = await packRun(runDir, {
      out: values['output-file'],
      predictions: values.predictions,
      student: values.student,
    });
    // The gradebook names a hand-in by its sealed predictions' student first, then by --student: say so when they disagree.
    const sealedStudent = seal === 'sealed' ? predictedStudent : null;
    const student = sealedStudent ?? manifest.student;
    io.out(
      `packed ${manifest.files.length} file(s) of run ${manifest.runIds.join(', ')} for ${student === null ? 'an unnamed student (the gradebook names it after the archive; add --student NAME)' : escapeTerminal(student)}\n`,
    );
    if (sealedStudent && manifest.student && sealedStudent !== manifest.student) {
      io.err(
        `termlab pack: ⚠ --student ${JSON.stringify(escapeTerminal(manifest.student))} differs from the student ${JSON.stringify(escapeTerminal(sealedStudent))} named in ${escapeTerminal(predictions ?? '')}: the gradebook takes the predictions' name and flags the difference for review\n`,
      );
    }
    if (seal === 'sealed')
      io.out(`with the predictions the run sealed before its first pod (${escapeTerminal(predictions ?? '')})\n`);
    else if (seal === 'unsealed')
      io.err(
        `termlab pack: ⚠ the run was started without --predictions: ${escapeTerminal(predictions ?? '')} is packed, but not sealed by the run, and the gradebook flags it for review\n`,
      );
    else
      io.err(
        'termlab pack: ⚠ no predictions: the run was started without --predictions and none is in the run directory (--predictions FILE packs one, unsealed); the gradebook flags it for review\n',
      );
    io.out(`${archive}\n`);
    return EXIT.ok;
  },
};
