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

/** YAML accepts JSON strings as double-quoted scalars: a name can never break the file. */
const quoted = (text: string) => JSON.stringify(text);

export function templateText(scenarios: Scenario[], student: string | undefined): string {
  const lines = [
    `# termlab predictions for ${scenarios.length} scenario(s). Before you run the lab, replace each ~ with your prediction:`,
    ...HOW_TO,
    '# Then: termlab run --predictions THIS_FILE, and termlab pack --predictions THIS_FILE.',
    `student: ${quoted(student ?? '')}${student ? '' : '  # your name'}`,
    'predictions:',
  ];
  for (const s of scenarios) lines.push(`  ${s.name}:`, `    # ${describeSetup(s)}`, '    outcome: ~', '    exitCode: ~');
  return lines.join('\n') + '\n';
}

export function filledText(student: string, answers: Record<string, { outcome: Outcome; exitCode: number }>, scenarios: Scenario[]): string {
  const lines = [`# termlab predictions, made before the run (${new Date().toISOString()}).`, ...HOW_TO, `student: ${quoted(student)}`, 'predictions:'];
  for (const s of scenarios) {
    const a = answers[s.name]!;
    lines.push(`  # ${describeSetup(s)}`, `  ${s.name}: { outcome: ${a.outcome}, exitCode: ${a.exitCode} }`);
  }
  const text = lines.join('\n') + '\n';
  // What we write must read back: the grader's own parser is the judge.
  const parsed: PredictionsFile = parsePredictions(text, 'the predictions being written');
  if (parsed.student !== student) throw new Error('the student name did not survive the round trip');
  return text;
}
