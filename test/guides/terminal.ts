// A command line typed at a terminal, as a student types it: run by the shell under `script`, which gives it a
// pseudo-terminal (so `termlab predict` asks its questions and `run` draws its live table), and answered when it
// asks: each question is answered once its prompt is the last thing on the screen.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Typed {
  code: number | null;
  /** What the terminal showed, escape sequences removed, one screen line per array item (redraws included). */
  lines: string[];
}

/** `null` for a question the caller cannot answer: the command is then stopped and the question reported. */
export type Answerer = (question: string, screen: string[]) => string | null;

export function scriptMissing(): string | null {
  return spawnSync('sh', ['-c', 'command -v script']).status === 0
    ? null
    : 'this test types at a pseudo-terminal through `script` (util-linux: apt install bsdutils; BSD and macOS have it)';
}

// The line is the shell's to read, as typed; its status goes to a file (BSD's script has no -e to pass it on).
const SHELL_LINE = 'eval "$TERMLAB_TYPED"; echo $? > "$TERMLAB_TYPED_EXIT"';
const scriptArgs = (): string[] =>
  process.platform === 'linux'
    ? ['-q', '-c', SHELL_LINE, '/dev/null'] // util-linux
    : ['-q', '/dev/null', '/bin/sh', '-c', SHELL_LINE]; // BSD, macOS

// CSI sequences (cursor moves, erases, colours) and the other two-byte escapes.
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;
// npx's spinner (braille frames, each drawn over the last): nothing a reader reads.
const SPINNER = /[\u2800-\u28ff]/g;
export const screenLines = (raw: string): string[] =>
  raw
    .replace(ESCAPES, '')
    .replace(SPINNER, '')
    .split(/\r\n|\r|\n/);

/** A prompt waits for input at the end of the screen: a question or a `label:` followed by the cursor. */
const PROMPT = /\S.*[?:] $/;

export function typeAt(
  cwd: string,
  line: string,
  env: NodeJS.ProcessEnv,
  answer: Answerer,
  signal: AbortSignal,
): Promise<Typed> {
  const exitFile = join(mkdtempSync(join(tmpdir(), 'typed-')), 'exit');
  return new Promise((resolve, reject) => {
    // -q: no "Script started" lines; the session's log goes nowhere.
    const child = spawn('script', scriptArgs(), {
      cwd,
      env: { ...env, SHELL: '/bin/sh', TERMLAB_TYPED: line, TERMLAB_TYPED_EXIT: exitFile },
      stdio: ['pipe', 'pipe', 'pipe'],
      signal,
      killSignal: 'SIGKILL',
    });
    let raw = '';
    let answeredUpTo = 0;
    let unanswerable: string | null = null;
    const onData = (chunk: string) => {
      raw += chunk;
      const pending = raw.slice(answeredUpTo);
      const tail = screenLines(pending).at(-1)!;
      if (!PROMPT.test(tail) || unanswerable) return;
      const reply = answer(tail.trim(), screenLines(raw));
      answeredUpTo = raw.length;
      if (reply === null) {
        unanswerable = tail.trim();
        child.kill('SIGKILL');
      } else child.stdin.write(`${reply}\r`);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    // Past its deadline the command is killed and resolves with no status and the screen so far.
    child.on('error', (error) => {
      if (error.name !== 'AbortError') reject(error);
    });
    child.on('close', (code) => {
      if (unanswerable) reject(new Error(`\`${line}\` asked what this test cannot answer: ${unanswerable}`));
      else resolve({ code: code === null ? null : exitCode(exitFile), lines: screenLines(raw) });
    });
  });
}

/** The status the shell wrote, or null when it never got to write one (the command was killed). */
function exitCode(file: string): number | null {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
}
