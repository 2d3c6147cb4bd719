// `termlab predict`: the student commits to an outcome and exit code per scenario (a retry scenario's attempts and
// ledger effects too) before seeing what the model or the cluster says. Interactive at a terminal; `--template` writes a file to fill in.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { CommandIO, CommandModule } from '../../lib/command.ts';
import { EXIT, TermlabError, unwritable } from '../../lib/errors.ts';
import { writeFileAtomic } from '../../lib/files.ts';
import { StudentSchema } from '../pack/manifest.ts';
import { loadScenarios, onlyNames } from '../scenario/load.ts';
import type { Scenario } from '../scenario/schema.ts';
import { describeSetup } from '../scenario/setup.ts';
import type { predictFlags } from './flags.ts';
import { type Answer, filledText, OUTCOMES, templateText, type Outcome } from './file.ts';

const DEFAULT_PREDICTIONS_FILE = 'predictions.yaml';
const MAX_EXIT_CODE = 255;
/** Attempts and effects: a few at most; three digits are asked for, as an exit code's. */
const MAX_COUNT = 999;

function checkedStudent(name: string): string {
  const parsed = StudentSchema.safeParse(name);
  if (!parsed.success) throw new TermlabError('USAGE', `--student: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

async function ask(
  scenarios: Scenario[],
  student: string | undefined,
  io: CommandIO,
  input: NodeJS.ReadableStream,
  scenarioFile: string | undefined,
): Promise<string> {
  const rl = createInterface({ input, output: process.stdout, terminal: true });
  // EOF (Ctrl-D) ends the questions as Ctrl-C does: nothing is written.
  const closed = new Promise<never>((_resolve, reject) =>
    rl.once('close', () =>
      reject(new TermlabError('INTERRUPTED', 'stopped before every prediction was made; nothing written')),
    ),
  );
  closed.catch(() => {});
  const question = (text: string) =>
    Promise.race([rl.question(text, { signal: io.signal }), closed]).catch((error) => {
      if (error instanceof TermlabError) throw error;
      throw new TermlabError('INTERRUPTED', 'stopped before every prediction was made; nothing written');
    });
  /** Asked until the answer is a whole number from min to max. */
  const wholeNumber = async (text: string, min: number, max = MAX_COUNT): Promise<number> => {
    for (;;) {
      const said = (await question(text)).trim();
      if (/^\d{1,3}$/.test(said) && Number(said) >= min && Number(said) <= max) return Number(said);
      io.out(
        max === MAX_COUNT
          ? `  please answer a whole number, ${min} or more\n`
          : `  please answer a whole number from ${min} to ${max}\n`,
      );
    }
  };
  try {
    let name = student;
    while (name === undefined) {
      const parsed = StudentSchema.safeParse(await question('your name: '));
      if (parsed.success) name = parsed.data;
      else io.out(`  ${parsed.error.issues[0]!.message}\n`);
    }
    io.out(`\nFor each scenario, predict what happens to the request in flight and the container's exit code.\n`);
    const answers: Record<string, Answer> = {};
    for (const s of scenarios) {
      io.out(`\n${s.name}  (${describeSetup(s)})\n`);
      let outcome: Outcome | undefined;
      while (!outcome) {
        const said = (await question(`  the request: ${OUTCOMES.join(', ')}? `)).trim().toLowerCase();
        outcome = OUTCOMES.find((o) => o === said);
        if (!outcome) io.out(`  please answer ${OUTCOMES.join(', ')}\n`);
      }
      const exitCode = await wholeNumber(`  the exit code (0-${MAX_EXIT_CODE})? `, 0, MAX_EXIT_CODE);
      // A retry scenario: the attempts the client makes and the effects the ledger records (predictions.ts).
      answers[s.name] = s.retry
        ? {
            outcome,
            exitCode,
            attempts: await wholeNumber('  the attempts the client makes (1 or more)? ', 1),
            effects: await wholeNumber('  the effects the ledger records (0 or more)? ', 0),
          }
        : { outcome, exitCode };
    }
    return filledText(name, answers, scenarios, scenarioFile);
  } finally {
    rl.close();
  }
}

/** The command as the CLI shows and parses it is harness/cli/commands/predict.ts; `input`: where the answers come from. */
export function createPredictCommand(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): CommandModule<typeof predictFlags> {
  return {
    async run(values, _positionals, io) {
      const out = values['output-file'] ?? DEFAULT_PREDICTIONS_FILE;
      const student = values.student === undefined ? undefined : checkedStudent(values.student);
      if (
        !values.force &&
        (await access(out).then(
          () => true,
          () => false,
        ))
      ) {
        throw new TermlabError(
          'USAGE',
          `${out} already exists: predictions are made once, before the run (--force replaces it)`,
        );
      }
      // A folder that is missing or not writable is said now, before any question is asked and answered in vain.
      await access(dirname(resolve(out)), constants.W_OK).catch((error) => {
        throw unwritable('OUTPUT_UNWRITABLE', 'the predictions file', out, error);
      });
      if (!values.template && !(input.isTTY && io.isTTY)) {
        throw new TermlabError(
          'USAGE',
          'not at a terminal: use --template to write a file to fill in, or run termlab predict in a terminal',
        );
      }
      const scenarios = await loadScenarios(values.scenarios, onlyNames(values.only));
      const text = values.template
        ? templateText(scenarios, student, values.scenarios)
        : await ask(scenarios, student, io, input, values.scenarios);
      await writeFileAtomic(out, text).catch((error) => {
        throw unwritable('OUTPUT_UNWRITABLE', 'the predictions file', out, error);
      });
      // The run the predictions are for: the same scenario set and the same --only, or the run refuses the file.
      const next = [
        'termlab run --sim',
        ...(values.scenarios === undefined ? [] : [`--scenarios ${values.scenarios}`]),
        ...(values.only === undefined ? [] : [`--only ${scenarios.map((s) => s.name).join(',')}`]),
        `--predictions ${out}`,
      ].join(' ');
      io.out(
        `\nwrote ${out}${values.template ? ': fill in each ~, then' : '; next:'} ${next}\n` +
          "  (on your class's cluster: --kubeconfig NAME.kubeconfig --lab lab.yaml instead of --sim)\n",
      );
      return EXIT.ok;
    },
  };
}
