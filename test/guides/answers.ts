// The answers of the lab: what the kubelet model says for each scenario (the honest student who worked it out
// types these into `termlab predict`), and how an answer looks on a screen or in a report, to catch one shown
// before the student has predicted.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { predictScenario } from '../../harness/grade/pod-theory.ts';
import { predictRetries } from '../../harness/grade/retry-theory.ts';
import { loadScenarioSet } from '../../harness/scenario/load.ts';

export interface Answer {
  outcome: string;
  exitCode: number;
  attempts?: number;
  effects?: number;
}

/** Every pod scenario of every scenario file in `manifests/`, by name, with the model's answer. */
export async function modelAnswers(root: string): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const file of readdirSync(join(root, 'manifests')).filter((f) => f.endsWith('.yaml'))) {
    const set = await loadScenarioSet(join(root, 'manifests', file)).catch(() => null);
    if (set?.kind !== 'pod') continue;
    for (const s of set.scenarios) {
      const p = predictScenario(s);
      const retries = s.retry ? predictRetries(s, p.outcome) : null;
      answers.set(s.name, {
        outcome: p.outcome,
        exitCode: p.exitCode,
        ...(retries ? { attempts: retries.attempts.length, effects: retries.effects } : {}),
      });
    }
  }
  return answers;
}

/** What `termlab predict` asks, answered from the model for the scenario it is asking about (named above it). */
export function answerQuestion(
  question: string,
  screen: string[],
  answers: Map<string, Answer>,
  student: string,
): string | null {
  if (/\bname\b/i.test(question)) return student;
  const asked = [...screen].reverse().find((l) => answers.has(l.split(/\s/)[0]!));
  const answer = asked === undefined ? undefined : answers.get(asked.split(/\s/)[0]!);
  if (!answer) return null;
  if (/exit code/i.test(question)) return String(answer.exitCode);
  if (/attempts/i.test(question) && answer.attempts !== undefined) return String(answer.attempts);
  if (/effects/i.test(question) && answer.effects !== undefined) return String(answer.effects);
  if (/request|outcome/i.test(question)) return answer.outcome;
  return null;
}

/** How an answer reads in termlab's output: a table's exit cell, "outcome/code", a verdict, the model's line. */
const ANSWER_SHAPES = [
  /\b\d{1,3} \((Completed|Error|OOMKilled)\)/,
  /\b(completed|cut|rejected|interrupted)\/\d{1,3}\b/,
  /model says|\bmodel: |matches the model|differs from the model/,
  /[✅❌]|prediction ✓|prediction fail/,
  /SIGKILL at \d/,
  /lab pair \S+: (pass|fail)/,
];

/** The lines of `lines` that show an answer: one of the shapes above, or a scenario named beside its outcome. */
export function answersShown(lines: string[], answers: Map<string, Answer>): string[] {
  return lines.filter((line) => {
    if (ANSWER_SHAPES.some((shape) => shape.test(line))) return true;
    const named = [...answers].find(([name]) => new RegExp(`(^|\\s|\\|)${name}(\\s|\\||$)`).test(line));
    return named !== undefined && new RegExp(`\\b${named[1].outcome}\\b`).test(line.replace(named[0], ''));
  });
}
