// Writing a predictions file: the same format `termlab run --predictions` and `grade` read
// (harness/grade/predictions.ts), either filled in at a terminal or as a template to fill in.
import { parsePredictions, type PredictionsFile } from '../grade/predictions.ts';
import type { Scenario } from '../scenario/schema.ts';
import { describeSetup } from '../scenario/setup.ts';

export const OUTCOMES = ['completed', 'cut', 'rejected'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const HOW_TO = [
  '#   outcome: completed (the request finished), cut (it was cut off) or rejected (refused before any work)',
  "#   exitCode: the container's exit code, 0-255",
];
/** A retry scenario's two more, told only when the file has one (predictions.ts grades them). */
const RETRY_HOW_TO = [
  '#   attempts (a retry scenario): how many times the client sends the request, the first included',
  '#   effects (a retry scenario): how many effects the ledger records for that one request, 0 or more',
];
const howTo = (scenarios: Scenario[]) => [...HOW_TO, ...(scenarios.some((s) => s.retry) ? RETRY_HOW_TO : [])];

/** One scenario's answers; attempts and effects for a retry scenario only. */
export interface Answer {
  outcome: Outcome;
  exitCode: number;
  attempts?: number;
  effects?: number;
}

/** YAML accepts JSON strings as double-quoted scalars: a name can never break the file. */
const quoted = (text: string) => JSON.stringify(text);

/** The scenario set the file is for (`--scenarios` as given), so a run of another set is refused: none for the default. */
const setLines = (scenarioFile: string | undefined) =>
  scenarioFile === undefined
    ? []
    : [`scenarios: ${quoted(scenarioFile)}  # run with --scenarios ${asArg(scenarioFile)}`];
/** A path in a comment as a shell word: plain when it is plain, else quoted (a newline can never end the comment). */
const asArg = (path: string) => (/^[\w./-]+$/.test(path) ? path : quoted(path));

export function templateText(scenarios: Scenario[], student: string | undefined, scenarioFile?: string): string {
  const lines = [
    `# termlab predictions for ${scenarios.length} scenario(s). Before you run the lab, replace each ~ with your prediction:`,
    ...howTo(scenarios),
    `# Then: termlab run${scenarioFile === undefined ? '' : ` --scenarios ${asArg(scenarioFile)}`} --predictions THIS_FILE, and termlab pack --predictions THIS_FILE.`,
    `student: ${quoted(student ?? '')}${student ? '' : '  # your name'}`,
    ...setLines(scenarioFile),
    'predictions:',
  ];
  for (const s of scenarios) {
    lines.push(
      `  ${s.name}:`,
      `    # ${describeSetup(s)}`,
      '    outcome: ~',
      '    exitCode: ~',
      ...(s.retry ? ['    attempts: ~', '    effects: ~'] : []),
    );
  }
  return lines.join('\n') + '\n';
}

export function filledText(
  student: string,
  answers: Record<string, Answer>,
  scenarios: Scenario[],
  scenarioFile?: string,
): string {
  const lines = [
    `# termlab predictions, made before the run (${new Date().toISOString()}).`,
    ...howTo(scenarios),
    `student: ${quoted(student)}`,
    ...setLines(scenarioFile),
    'predictions:',
  ];
  for (const s of scenarios) {
    const a = answers[s.name]!;
    const counts = (['attempts', 'effects'] as const)
      .filter((k) => a[k] !== undefined)
      .map((k) => `, ${k}: ${a[k]}`)
      .join('');
    lines.push(`  # ${describeSetup(s)}`, `  ${s.name}: { outcome: ${a.outcome}, exitCode: ${a.exitCode}${counts} }`);
  }
  const text = lines.join('\n') + '\n';
  // What we write must read back: the grader's own parser is the judge.
  const parsed: PredictionsFile = parsePredictions(text, 'the predictions being written');
  if (parsed.student !== student) throw new Error('the student name did not survive the round trip');
  if (parsed.scenarios !== scenarioFile) throw new Error('the scenario file did not survive the round trip');
  return text;
}
