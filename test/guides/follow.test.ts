// Follow the guides as a newcomer does, from a fresh clone on the simulated cluster: the student path as the
// README orders it (its first command, then the student guide: scenarios, predict, run, pack) and the instructor
// path (grade the hand-in, the class report). The commands are the docs' own marked blocks (docs.ts), typed at a
// terminal (terminal.ts). It fails when a command fails, when an answer shows before the student has predicted,
// or when a hint termlab prints (hints.ts) leads to a failing command.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';
import { type Answer, answerQuestion, answersShown, modelAnswers } from './answers.ts';
import { copyOf, freshClone, npmShim } from './clone.ts';
import { firstBlockLine, guideBlocks } from './docs.ts';
import { asTyped, hintsIn, sameCommand } from './hints.ts';
import { scriptMissing, typeAt } from './terminal.ts';

const STUDENT = 'Ada Lovelace';
const scratch = mkdtempSync(join(tmpdir(), 'termlab-follow-'));
let copies = 0;
const copyName = (why: string) => join(scratch, `${++copies}-${why}`);

// The student's environment: no kubeconfig (the simulated cluster only), a home of its own, the npm stand-in;
// nothing of the test runner's own (vitest's variables, the outer `npm test`'s npm_* settings and PATH entries).
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(VITEST|npm_|INIT_CWD$|NODE_ENV$)/.test(k)),
);
const ownPath = (process.env.PATH ?? '').split(':').filter((p) => !/node_modules[/\\]\.bin$|node-gyp-bin$/.test(p));
Object.assign(env, {
  HOME: join(scratch, 'home'),
  KUBECONFIG: '',
  PATH: [npmShim(join(scratch, 'bin')), ...ownPath].join(':'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
});

let answers: Map<string, Answer>;
let tracked: Set<string>;

/** The student has predicted once a predictions file of theirs (not the clone's) has every blank filled in. */
function predictedIn(dir: string): boolean {
  return readdirSync(dir).some((name) => {
    if (tracked.has(name) || !name.endsWith('.yaml') || !statSync(join(dir, name)).isFile()) return false;
    const text = readFileSync(join(dir, name), 'utf8');
    return /^predictions:/m.test(text) && !/: ~\s*$/m.test(text);
  });
}

/** `reports/run-…`: a placeholder the reader fills in with what is there, here the newest match. */
function filledIn(dir: string, line: string): string {
  return line.replace(/\S*…\S*/g, (token) => {
    const [head, tail] = basename(token).split('…') as [string, string];
    const found = readdirSync(join(dir, dirname(token)))
      .filter((n) => n.startsWith(head) && n.endsWith(tail))
      .sort();
    if (!found.length) throw new Error(`${token}: nothing in ${dir} matches it`);
    return join(dirname(token), found.at(-1)!);
  });
}

const runDirs = (dir: string) =>
  existsSync(join(dir, 'reports')) ? readdirSync(join(dir, 'reports')).filter((n) => n.startsWith('run-')) : [];

/** What a run's reports show a reader (the tags of the HTML left out). */
const reportLines = (runDir: string) =>
  ['report.md', 'report.html', 'junit.xml']
    .filter((f) => existsSync(join(runDir, f)))
    .flatMap((f) =>
      readFileSync(join(runDir, f), 'utf8')
        .replace(/<style[\s\S]*?<\/style>|<[^>]*>/g, '\n')
        .split('\n'),
    );

interface Step {
  dir: string;
  line: string;
  where: string;
  /** The student's own path: nothing may show an answer before they predicted. */
  student: boolean;
  /** The commands the path itself runs later: a hint naming one of them is followed there, not twice. */
  later: string[];
  signal: AbortSignal;
}

const followed = new Set<string>();

async function type(step: Step): Promise<void> {
  const { dir, where } = step;
  const line = filledIn(dir, step.line);
  const before = { predicted: predictedIn(dir), runs: runDirs(dir) };
  const started = performance.now();
  const r = await typeAt(
    dir,
    line,
    env,
    (question, screen) => answerQuestion(question, screen, answers, STUDENT),
    AbortSignal.any([step.signal, AbortSignal.timeout(180_000)]),
  );
  const shown = `${where}: \`${line}\` in ${dir} showed:\n${r.lines.join('\n')}`;
  // Each command's time, to measure what the test costs: TERMLAB_FOLLOW_TIMES=1 npx vitest run test/guides/follow.test.ts
  if (process.env.TERMLAB_FOLLOW_TIMES)
    console.log(`${((performance.now() - started) / 1000).toFixed(1)}s ${where}: ${line}`);
  expect(r.code, shown).toBe(0);
  if (step.student && !before.predicted && !/--reveal\b/.test(line)) {
    expect(answersShown(r.lines, answers), `an answer before a prediction: ${shown}`).toEqual([]);
    for (const run of runDirs(dir).filter((d) => !before.runs.includes(d)))
      expect(answersShown(reportLines(join(dir, 'reports', run)), answers), `reports/${run} of ${where}`).toEqual([]);
  }
  // Each file the command names is there after it (what it read, and what it was asked to write).
  for (const file of line.split(/\s+/).filter((t) => /^[\w./-]+\.\w+$/.test(t) && !t.startsWith('-')))
    expect(existsSync(join(dir, file)), `${where}: \`${line}\` left no ${file}`).toBe(true);
  for (const hint of hintsIn(r.lines)) {
    const key = sameCommand(hint);
    if (step.later.includes(key) || followed.has(key)) continue;
    followed.add(key);
    // In a copy of the folder as it is now: the hint is what the student could have typed next, instead.
    await type({ ...step, dir: copyOf(dir, copyName('hint')), line: asTyped(hint), where: `the hint of ${where}` });
  }
}

beforeAll(async () => {
  const missing = scriptMissing();
  if (missing) throw new Error(missing);
});

describe('the guides, followed from a fresh clone', () => {
  let handIn: string;

  it('the student path: the README first, then the student guide (scenarios, predict, run, pack)', async ({
    signal,
  }) => {
    const student = freshClone(repoRoot, join(scratch, 'student'));
    tracked = new Set(readdirSync(student));
    answers = await modelAnswers(student);
    const readme = guideBlocks(student, 'README.md', 'student');
    // The README's first command is where a newcomer starts: it is on the path, first.
    expect(readme[0]?.where).toBe(`README.md:${firstBlockLine(student, 'README.md')}`);
    const blocks = [...readme, ...guideBlocks(student, 'docs/student-guide.md', 'student')];
    let before = student;
    for (const [i, block] of blocks.entries()) {
      const after = blocks
        .slice(i + 1)
        .flatMap((b) => b.lines)
        .map(sameCommand);
      // An alternative ("if you are not at a terminal") from where the block before it began, beside the path.
      const dir = block.instead ? copyOf(before, copyName('instead')) : student;
      if (blocks[i + 1]?.instead) before = copyOf(student, copyName('before'));
      for (const [n, line] of block.lines.entries()) {
        const later = [...block.lines.slice(n + 1).map(sameCommand), ...after];
        await type({ dir, line, where: `${block.where} line ${n + 1}`, student: true, later, signal });
      }
    }
    expect(predictedIn(student), 'the path predicted').toBe(true);
    const archives = readdirSync(student)
      .filter((n) => n.endsWith('.tar.gz'))
      .map((n) => join(student, n));
    expect(archives.length, 'the path packed a hand-in').toBeGreaterThan(0);
    // The one file handed in: the last one packed.
    handIn = archives.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs).at(-1)!;
  }, 420_000);

  it('the instructor path: the hand-in graded, the gradebook and the class report written', async ({ signal }) => {
    expect(handIn, 'the student path ran first').toBeDefined();
    const instructor = freshClone(repoRoot, join(scratch, 'instructor'));
    const blocks = guideBlocks(instructor, 'docs/instructor-guide.md', 'instructor');
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks)
      for (const [n, line] of block.lines.entries()) {
        // "Put them in one directory": the folder the command grades.
        for (const folder of line.split(/\s+/).filter((t) => t.endsWith('/'))) {
          mkdirSync(join(instructor, folder), { recursive: true });
          copyFileSync(handIn, join(instructor, folder, basename(handIn)));
        }
        const existed = new Set(readdirSync(instructor));
        await type({
          dir: instructor,
          line,
          where: `${block.where} line ${n + 1}`,
          student: false,
          later: [],
          signal,
        });
        // What it wrote by name (the gradebook, the class report) names the student.
        for (const file of line.split(/\s+/).filter((t) => /^[\w.-]+\.\w+$/.test(t) && !existed.has(t)))
          expect(readFileSync(join(instructor, file), 'utf8'), file).toContain(STUDENT);
      }
  }, 120_000);
});
