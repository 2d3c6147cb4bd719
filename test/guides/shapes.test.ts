// What follow.test.ts counts as an answer shown and as a hint, held to lines termlab really printed (2026-12-06):
// a check that saw nothing would let the guides test pass whatever the screen said.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';
import { type Answer, answerQuestion, answersShown, modelAnswers } from './answers.ts';
import { guideBlocks } from './docs.ts';
import { hintsIn, sameCommand } from './hints.ts';
import { screenLines } from './terminal.ts';

let answers: Map<string, Answer>;
beforeAll(async () => {
  answers = await modelAnswers(repoRoot);
});

describe('an answer on the screen', () => {
  it('is found in every shape a revealed run and `scenarios --reveal` print it', () => {
    const revealed = [
      'hook-fits-grace      exec sleep 3s    30s    completed  0 (Completed)  completed/0  ✅ matches the model',
      'short-grace          exec sleep 3s    5s     cut        137 (Error)    cut/137      ✅ matches the model',
      'short-grace          cut',
      '| short-grace | graceful | exec sleep 3s | 5s | 10s | cut |',
      '    model: completed, exit 0 — grace 30s; preStop runs 3s, 3s taken from the grace; SIGTERM at 3s, SIGKILL at 30s',
      'lab pair grace: pass — the same 10s of work was cut with 5s of grace and completed with 15s, on two pods',
      '  short-grace: prediction ✓ you predicted cut/137 and that is what happened',
    ];
    for (const line of revealed) expect(answersShown([line], answers), line).toEqual([line]);
  });

  it('is not found in the setups, the hidden table, its hint, or the questions `termlab predict` asks', () => {
    const hidden = [
      'short-grace  (graceful, preStop exec sleep 3s, grace 5s, work 10s, delete after 1s)',
      'scenario             preStop          grace',
      'short-grace          exec sleep 3s    5s',
      "answers hidden: no predictions were sealed, so the outcomes, exit codes, verdicts and the kubelet model's answers are not shown (the observation files hold the evidence in full). Predict each outcome first: `termlab predict`, then run with --predictions; or run again with --reveal to see them now.",
      "no predictions sealed: the outcomes and the model's answers stay hidden (predict first, or pass --reveal)",
      ' ✔ short-grace          done               9.0s',
      '  the request: completed, cut, rejected? cut',
      '  the exit code (0-255)? 137',
    ];
    expect(answersShown(hidden, answers)).toEqual([]);
  });
});

describe('a hint', () => {
  it('is a command after next:, try: or then, or one in backticks', () => {
    const screen = screenLines(
      [
        'wrote predictions.yaml; next: termlab run --sim --predictions predictions.yaml\r',
        "  (on your class's cluster: --kubeconfig NAME.kubeconfig --lab lab.yaml instead of --sim)",
        'wrote p.yaml: fill in each ~, then termlab run --sim --scenarios manifests/sidecars.yaml --predictions p.yaml',
        "Predict each outcome first: `termlab predict`. `termlab scenarios --reveal` shows the model's answers.",
        'try: npx termlab grade reports/latest',
        'then run with --predictions; the run ended',
      ].join('\n'),
    );
    expect(hintsIn(screen)).toEqual([
      'termlab run --sim --predictions predictions.yaml',
      'termlab run --sim --scenarios manifests/sidecars.yaml --predictions p.yaml',
      'termlab predict',
      'termlab scenarios --reveal',
      'npx termlab grade reports/latest',
    ]);
    expect(sameCommand('npx termlab predict')).toBe(sameCommand('node bin/termlab.js  predict'));
  });
});

describe("`termlab predict`'s questions", () => {
  it('are answered with the model for the scenario named above them', () => {
    const screen = ['', 'short-grace  (graceful, preStop exec sleep 3s, grace 5s, work 10s, delete after 1s)'];
    expect(answerQuestion('your name:', screen, answers, 'Ada')).toBe('Ada');
    expect(answerQuestion('the request: completed, cut, rejected?', screen, answers, 'Ada')).toBe('cut');
    expect(answerQuestion('the exit code (0-255)?', screen, answers, 'Ada')).toBe('137');
    expect(answerQuestion('Ok to proceed? (y)', screen, answers, 'Ada')).toBeNull();
  });
});

describe('the marked blocks', () => {
  it('are read in order, an alternative marked, and a marker that marks nothing refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'guide-'));
    const doc = (text: string) => {
      writeFileSync(join(dir, 'g.md'), text);
      return () => guideBlocks(dir, 'g.md', 'student');
    };
    const fence = (...lines: string[]) => ['```sh', ...lines, '```'].join('\n');
    const blocks = doc(
      [
        fence('npx termlab skipped'),
        '<!-- guide:student -->',
        fence('npx termlab one    # a comment', '', 'npx termlab two'),
        '<!-- guide:student instead of the block before -->',
        fence('npx termlab other'),
      ].join('\n'),
    )();
    expect(blocks).toEqual([
      { where: 'g.md:5', instead: false, lines: ['npx termlab one', 'npx termlab two'] },
      { where: 'g.md:11', instead: true, lines: ['npx termlab other'] },
    ]);
    expect(doc(['<!-- guide:student -->', '', fence('npx termlab one')].join('\n'))).toThrow(/g\.md:1: a guide marker/);
  });
});
