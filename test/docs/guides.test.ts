// The student guide and the instructor guide followed word by word: every ```sh line of each is
// either run as written (in a folder laid out as a fresh clone, `termlab predict` at a real terminal
// in tmux) or named below as needing a cluster, so a new command in a guide fails here until it is.
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GradebookSchema } from '../../harness/class/gradebook.ts';
import { EXIT } from '../../lib/errors.ts';
import { repoRoot } from '../support/processes.ts';

/** The lines of every ```sh block, comments after `#` dropped. */
function guideCommands(file: string): string[] {
  const text = readFileSync(join(repoRoot, 'docs', file), 'utf8');
  return [...text.matchAll(/^ *```sh\n([\s\S]*?)^ *```/gm)]
    .flatMap((m) => m[1]!.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** Lines that need a cluster, docker or kind: run on the real node (`npm run test:cluster:class`), not here. */
const NEEDS_A_CLUSTER = [
  'npx termlab run --predictions predictions.yaml --kubeconfig NAME.kubeconfig --lab lab.yaml',
  'docker build -f server/Dockerfile --target lab -t termlab/lab-server:0.1.0 .',
  'kind load docker-image termlab/lab-server:0.1.0 --name termlab',
  'kubectl apply -f manifests/namespace.yaml',
  'kubectl apply -f manifests/rbac.yaml',
  'kubectl apply -f manifests/class.yaml',
  "sed 's/<owner>/OWNER/' manifests/reaper-cronjob.yaml | kubectl apply -f -",
  "sed 's/<owner>/OWNER/' manifests/class.yaml | kubectl apply -f -",
  'npx termlab class student alice --namespace termlab --output-file alice.kubeconfig [--hours 24]',
  'npx termlab run --kubeconfig alice.kubeconfig --lab manifests/lab.yaml',
  // The class's witness: its records on the cluster, and the export they make (test:cluster:class runs these).
  'npx termlab grade submissions/ --gradebook grades.csv --lab manifests/lab.yaml --witness [--context C] [--namespace termlab]',
  'npx termlab class witness export --output-file witness-2026.json [--context C] [--namespace termlab]',
  'npx termlab grade submissions/ --gradebook grades.csv --witness-file witness-2026.json',
];
const needsCluster = (line: string) => NEEDS_A_CLUSTER.includes(line);

/** The student guide's later exercises, each its own scenario file, predictions, pair and archive. */
const EXERCISES = [
  {
    file: 'manifests/sidecars.yaml',
    shows: 'sidecar-native-proxy',
    hides: /\bcut\b|\b137\b/,
    predictions: 'sidecar-predictions.yaml',
    count: 4,
    pair: 'sidecar',
  },
  // A retry's setup names what it retries on (a cut); the answers are the exit codes and the ledger's counts.
  {
    file: 'manifests/retries.yaml',
    shows: 'retry-doubles-effect',
    hides: /\b137\b|already-applied|effect\(s\)/,
    predictions: 'retry-predictions.yaml',
    count: 4,
    pair: 'retries',
  },
] as const;
const exerciseOf = (line: string) =>
  EXERCISES.find((e) => line.includes(e.file) || line.includes(e.predictions.replace('-predictions.yaml', '')))!;
const EXERCISE_SCENARIOS = /^npx termlab scenarios --scenarios manifests\/(sidecars|retries)\.yaml$/;
const EXERCISE_PREDICT = /^npx termlab predict --scenarios manifests\/(sidecars|retries)\.yaml --template/;
const EXERCISE_RUN = /^npx termlab run --sim --scenarios manifests\/(sidecars|retries)\.yaml/;
const EXERCISE_PACK = /^npx termlab pack --output-file ada-(sidecars|retries)\.tar\.gz$/;

const scratch = mkdtempSync(join(tmpdir(), 'termlab-guides-'));
const tmuxSocket = `termlab-guide-${process.pid}`;
const env = {
  ...process.env,
  HOME: join(scratch, 'home'),
  TERMLAB_STATE_DIR: join(scratch, 'state'),
  KUBECONFIG: '',
  npm_config_update_notifier: 'false',
};

/** A folder laid out as a fresh clone after `npm install`: the repository's files, its own reports/ and predictions. */
function cloneLike(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(repoRoot)) {
    if (['.git', 'reports', 'predictions.yaml', '.termlab'].includes(entry)) continue;
    symlinkSync(join(repoRoot, entry), join(dir, entry));
  }
  return dir;
}

function sh(cwd: string, line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const tmux = (...args: string[]) => spawnSync('tmux', ['-L', tmuxSocket, ...args], { encoding: 'utf8' });
// capture-pane drops a line's trailing spaces: the prompts are matched without theirs.
const PROMPT = /your name:|the request: completed, cut, rejected\?|the exit code \(0-255\)\?/g;

/** `termlab predict` at a terminal: each answer typed when its question is on the screen. */
async function predictAtTerminal(cwd: string, line: string, answers: string[]): Promise<string> {
  const done = join(cwd, '.predict-exit');
  const started = tmux(
    'new-session',
    '-d',
    '-x',
    '220',
    '-y',
    '50',
    '-c',
    cwd,
    `${line}; echo $? > ${done}; sleep 600`,
  );
  expect(started.status, started.stderr).toBe(0);
  let answered = 0;
  const deadline = Date.now() + 90_000;
  while (!existsSync(done)) {
    if (Date.now() > deadline)
      throw new Error(
        `termlab predict did not finish (${answered} answers typed); the screen:\n${tmux('capture-pane', '-p', '-S', '-200').stdout}\n${tmux('list-sessions').stdout}`,
      );
    const screen = tmux('capture-pane', '-p', '-S', '-2000').stdout;
    const asked = screen.match(PROMPT)?.length ?? 0;
    if (asked > answered && answered < answers.length) {
      tmux('send-keys', '-l', answers[answered]!);
      tmux('send-keys', 'Enter');
      answered++;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(answered).toBe(answers.length);
  return readFileSync(done, 'utf8').trim();
}

let student: string;
const archiveOf = () => readdirSync(student).filter((n) => n.endsWith('.tar.gz'));

beforeAll(() => {
  const version = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
  if (version.status !== 0)
    throw new Error(
      'this test types at a real terminal through tmux: install tmux (apt install tmux, brew install tmux)',
    );
  student = cloneLike('student');
});
afterAll(() => {
  tmux('kill-server');
});

describe('the student guide, word by word', () => {
  const lines = guideCommands('student-guide.md');

  it('names every line it does not run', () => {
    expect(lines.filter(needsCluster)).toEqual([
      'npx termlab run --predictions predictions.yaml --kubeconfig NAME.kubeconfig --lab lab.yaml',
    ]);
  });

  it('runs on a laptop as written: scenarios, predict at a terminal, run --sim, pack', async () => {
    const run = (line: string) => sh(student, line);
    const answersByScenario = new Map<string, string[]>();
    const exerciseAnswers = new Map<string, string[][]>();
    for (const line of lines.filter((l) => !needsCluster(l))) {
      if (line === 'npx termlab scenarios') {
        const r = await run(line);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('short-grace');
        // The setups only: no outcome before the student has predicted.
        expect(r.stdout).not.toMatch(/\bcut\b|\b137\b/);
        // What an honest student who worked it out would answer: the model's answers.
        const revealed = JSON.parse((await run('npx termlab scenarios --reveal -o json')).stdout) as {
          scenario: { name: string };
          prediction: { outcome: string; exitCode: number };
        }[];
        for (const row of revealed)
          answersByScenario.set(row.scenario.name, [row.prediction.outcome, String(row.prediction.exitCode)]);
      } else if (line === 'npx termlab predict') {
        const exit = await predictAtTerminal(student, line, [
          'Ada Lovelace',
          ...[...answersByScenario.values()].flat(),
        ]);
        expect(exit).toBe('0');
        expect(readFileSync(join(student, 'predictions.yaml'), 'utf8')).toContain('student: "Ada Lovelace"');
      } else if (line.startsWith('npx termlab predict --template')) {
        // The student who is not at a terminal, in a folder of their own.
        const other = cloneLike('template-student');
        const r = await sh(other, line);
        expect(r.code, r.stderr).toBe(0);
        expect(readFileSync(join(other, 'predictions.yaml'), 'utf8')).toMatch(/outcome: ~/);
        expect((await sh(other, line)).code).toBe(EXIT.badInput);
      } else if (line.startsWith('npx termlab run --sim') && !EXERCISE_RUN.test(line)) {
        const r = await run(line);
        expect(r.code, r.stdout + r.stderr).toBe(EXIT.ok);
        expect(r.stdout).toContain('predictions sealed: predictions.yaml');
        expect(r.stdout).toContain('predictions: 8 of 8 right');
        expect(r.stdout).toContain('lab pair grace: pass');
        expect(readdirSync(join(student, 'reports', 'latest'))).toContain('report.html');
      } else if (line === 'npx termlab pack') {
        const r = await run(line);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('for Ada Lovelace');
        expect(archiveOf()).toHaveLength(1);
      } else if (line.startsWith('npx termlab pack reports/run-')) {
        const runDir = readdirSync(join(student, 'reports')).find((d) => d.startsWith('run-'))!;
        const r = await run(line.replace('reports/run-…', `reports/${runDir}`));
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('with the predictions the run sealed');
      } else if (EXERCISE_SCENARIOS.test(line)) {
        // Exercises 3 and 4: the setups, no answers; then what an honest student works out.
        const exercise = exerciseOf(line);
        const r = await run(line);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(exercise.shows);
        expect(r.stdout).not.toMatch(exercise.hides);
        const revealed = JSON.parse((await run(`${line} --reveal -o json`)).stdout) as {
          scenario: { name: string };
          prediction: { outcome: string; exitCode: number };
          retries?: { attempts: unknown[]; effects: number };
        }[];
        // A retry scenario's template asks for its attempts and the ledger's effects too, in that order.
        exerciseAnswers.set(
          exercise.file,
          revealed.map((row) => [
            row.prediction.outcome,
            String(row.prediction.exitCode),
            ...(row.retries ? [String(row.retries.attempts.length), String(row.retries.effects)] : []),
          ]),
        );
      } else if (EXERCISE_PREDICT.test(line)) {
        const exercise = exerciseOf(line);
        const r = await run(line);
        expect(r.code, r.stderr).toBe(0);
        // Each ~ filled in, in the file's order, as the guide asks.
        const file = join(student, exercise.predictions);
        if (exercise.pair === 'retries')
          expect(readFileSync(file, 'utf8')).toMatch(/^ {4}attempts: ~\n {4}effects: ~$/m);
        const answers = exerciseAnswers.get(exercise.file)!.flat();
        writeFileSync(
          file,
          readFileSync(file, 'utf8').replace(/: ~$/gm, () => `: ${answers.shift()}`),
        );
        expect(answers).toEqual([]);
      } else if (EXERCISE_RUN.test(line)) {
        const exercise = exerciseOf(line);
        const r = await run(line);
        expect(r.code, r.stdout + r.stderr).toBe(EXIT.ok);
        expect(r.stderr).toBe('');
        expect(r.stdout).toContain(`predictions sealed: ${exercise.predictions}`);
        expect(r.stdout).toContain(`predictions: ${exercise.count} of ${exercise.count} right`);
        expect(r.stdout).toContain(`lab pair ${exercise.pair}: pass`);
      } else if (EXERCISE_PACK.test(line)) {
        const r = await run(line);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('for Ada Lovelace');
      } else {
        throw new Error(`the student guide has a command this test does not follow: ${line}`);
      }
    }
    expect(existsSync(join(student, 'ada.tar.gz'))).toBe(true);
    expect(existsSync(join(student, 'ada-sidecars.tar.gz'))).toBe(true);
    expect(existsSync(join(student, 'ada-retries.tar.gz'))).toBe(true);
    // Four sim runs, each a lab: the retries exercise added one (its run took ~50 s at load 13; the whole test 246 s).
  }, 420_000);
});

describe('the instructor guide, word by word', () => {
  const lines = guideCommands('instructor-guide.md');

  it('names every line it does not run', () => {
    expect(lines.filter((l) => !needsCluster(l)).every((l) => l.startsWith('npx termlab grade '))).toBe(true);
  });

  it('grades a class folder as written: every entry accounted for, each flag with its reason, exit 4', async () => {
    expect(existsSync(join(student, 'ada.tar.gz')), 'the student guide ran first').toBe(true);
    const instructor = cloneLike('instructor');
    const submissions = join(instructor, 'submissions');
    mkdirSync(submissions);
    copyFileSync(join(student, 'ada.tar.gz'), join(submissions, 'ada.tar.gz'));
    copyFileSync(join(student, 'ada.tar.gz'), join(submissions, 'eve.tar.gz'));
    writeFileSync(join(submissions, 'broken.tar.gz'), 'not gzip at all\n');
    writeFileSync(join(submissions, 'README.txt'), 'the course site put this here\n');
    for (const line of lines.filter((l) => !needsCluster(l))) {
      const r = await sh(instructor, line);
      expect(r.code, r.stdout + r.stderr).toBe(EXIT.needsReview);
      const book = GradebookSchema.parse(JSON.parse(readFileSync(join(instructor, 'grades.json'), 'utf8')));
      const rows = new Map(book.rows.map((row) => [row.submission.split('/').pop(), row]));
      expect([...rows.keys()].sort()).toEqual(['ada.tar.gz', 'broken.tar.gz', 'eve.tar.gz']);
      expect(rows.get('eve.tar.gz')!.review.join('\n')).toContain('shares pod UIDs with');
      expect(rows.get('broken.tar.gz')!.problems.join('\n')).toMatch(/broken\.tar\.gz/);
      expect(book.skipped.map((s) => s.path.split('/').pop())).toEqual(['README.txt']);
      expect(readFileSync(join(instructor, 'grades.csv'), 'utf8')).toContain('Ada Lovelace');
      expect(readFileSync(join(instructor, 'class.html'), 'utf8')).toContain('<table class="class">');
    }
  }, 120_000);
});
