// dev/entry.ts, the one runner every dev tool's entry goes through, as real processes: a TermlabError ends
// a tool with one line and the one table's exit code, a bug with its stack and 70, --help with the usage,
// Ctrl-C as the tool's rule says. Then every dev entry that package.json's scripts run: each goes through
// the runner, refuses a flag it does not take in one line naming its usage (exit 2) before doing anything,
// and prints its usage for --help.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor } from '../../lib/errors.ts';
import { repoRoot } from '../support/processes.ts';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});
const temp = (what: string) => {
  const dir = mkdtempSync(join(tmpdir(), `termlab-dev-${what}-`));
  temps.push(dir);
  return dir;
};

interface Tool {
  child: ChildProcess;
  /** Resolves once stdout (or stderr) has shown `text`. */
  saw(text: string, stream?: 'stdout' | 'stderr'): Promise<void>;
  ended: Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function start(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Tool {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, file), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  const waiting: { text: string; stream: 'stdout' | 'stderr'; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiting])
      if (out[w.stream].includes(w.text)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
  };
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream]!.on('data', (c: Buffer) => {
      out[stream] += c;
      check();
    });
  const ended = new Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (status, signal) => resolve({ status, signal, ...out })),
  );
  return {
    child,
    saw: (text, stream = 'stdout') =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ text, stream, resolve });
        check();
        void ended.then(() =>
          reject(new Error(`ended without printing ${JSON.stringify(text)}: ${JSON.stringify(out)}`)),
        );
      }),
    ended,
  };
}

const FIXTURE = 'test/dev/fixture-tool.ts';
const fixture = (tcase: string, interrupt = 'exit', args: string[] = []) =>
  start(FIXTURE, args, { DEV_TOOL_CASE: tcase, DEV_TOOL_INTERRUPT: interrupt });
const lines = (text: string) => text.trim().split('\n').filter(Boolean);

describe.concurrent('the dev runner (dev/entry.ts)', () => {
  it('ends a tool that returns with 0 and nothing on stderr', async () => {
    const r = await fixture('ok').ended;
    expect(r).toMatchObject({ status: EXIT.ok, stderr: '', stdout: 'done\n' });
  });

  it("ends a TermlabError with one line `name: message` and its code's exit code from the one table", async () => {
    for (const [tcase, code, message] of [
      ['setup', 'SETUP_FAILED', 'docker not found on PATH'],
      ['checks', 'CHECKS_FAILED', '2 of 23 scenarios disagree'],
      ['cluster', 'CLUSTER_UNREACHABLE', 'no kubeconfig'],
    ] as const) {
      const r = await fixture(tcase).ended;
      expect(r.status, tcase).toBe(exitCodeFor(code));
      expect(lines(r.stderr), tcase).toEqual([`fixture:tool: ${message}`]);
    }
  });

  it('ends a bug, thrown or a rejection nobody awaited, as an internal error with its stack: exit 70', async () => {
    const [thrown, rejected] = await Promise.all([fixture('bug').ended, fixture('rejection').ended]);
    expect(thrown.status).toBe(EXIT.internalError);
    expect(thrown.stderr).toMatch(
      /^fixture:tool: internal error \(please report it\): TypeError: a bug in the tool\n\s+at /,
    );
    expect(rejected.status).toBe(EXIT.internalError);
    expect(rejected.stderr).toMatch(/^fixture:tool: internal error \(please report it\): RangeError: a rejection/);
  });

  it('refuses a flag the tool does not take in one line with its usage (exit 2), and prints the usage for --help', async () => {
    const [bad, help] = await Promise.all([
      fixture('ok', 'exit', ['--nope']).ended,
      fixture('ok', 'exit', ['--help']).ended,
    ]);
    expect(bad.status).toBe(EXIT.badInput);
    expect(bad.stdout).toBe('');
    expect(lines(bad.stderr)).toEqual([
      "fixture:tool: Unknown option '--nope' (usage: npm run fixture:tool -- [--flag])",
    ]);
    expect(help).toMatchObject({ status: EXIT.ok, stdout: 'usage: npm run fixture:tool -- [--flag]\n', stderr: '' });
  });

  it("Ctrl-C, 'exit': runs onInterrupt and ends at once with 130, main's own clean-up not reached", async () => {
    const t = fixture('wait', 'exit');
    await t.saw('waiting');
    t.child.kill('SIGINT');
    const r = await t.ended;
    expect(r.status).toBe(EXIT.interrupted);
    expect(lines(r.stdout)).toEqual(['waiting', 'onInterrupt ran']);
    expect(lines(r.stderr)).toEqual(['fixture:tool: interrupted']);
  });

  it("Ctrl-C, 'abort': main's signal is aborted, it cleans up and ends, and the tool exits 130", async () => {
    const t = fixture('wait', 'abort');
    await t.saw('waiting');
    t.child.kill('SIGINT');
    const r = await t.ended;
    expect(r.status).toBe(EXIT.interrupted);
    expect(lines(r.stdout)).toEqual(['waiting', 'cleaned up']);
    expect(lines(r.stderr)).toEqual([
      'fixture:tool: stopping cleanly (Ctrl-C again to quit at once)',
      'fixture:tool: interrupted',
    ]);
  });

  it("Ctrl-C, 'finish': main goes on to its end (cluster:down's rule), then 130", async () => {
    const t = fixture('wait', 'finish');
    await t.saw('waiting');
    t.child.kill('SIGINT');
    const r = await t.ended;
    expect(r.status).toBe(EXIT.interrupted);
    expect(lines(r.stdout)).toEqual(['waiting', 'finished the work', 'cleaned up']);
    expect(lines(r.stderr)[0]).toBe('fixture:tool: finishing first (Ctrl-C again to quit at once)');
  });

  // Issue 39: SIGTERM stops as Ctrl-C does, but is named as itself and exits 143 (128 + 15), not 130.
  it("SIGTERM, 'finish': the same stop, named SIGTERM, exit 143", async () => {
    const t = fixture('wait', 'finish');
    await t.saw('waiting');
    t.child.kill('SIGTERM');
    const r = await t.ended;
    expect(r.status).toBe(EXIT.terminated);
    expect(lines(r.stdout)).toEqual(['waiting', 'finished the work', 'cleaned up']);
    expect(lines(r.stderr)[0]).toBe('fixture:tool: SIGTERM received: finishing first (a second signal quits at once)');
  });

  it('a second Ctrl-C past the relay window quits at once; one within it is the same Ctrl-C', async () => {
    const t = fixture('stubborn', 'abort');
    await t.saw('waiting');
    t.child.kill('SIGINT');
    await t.saw('stopping cleanly', 'stderr');
    // A launcher's relay of the same Ctrl-C: ignored.
    t.child.kill('SIGINT');
    // The window is the runner's rule (1 s): only time past it tells a second Ctrl-C from a relayed one.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    expect(t.child.exitCode).toBe(null);
    t.child.kill('SIGINT');
    const r = await t.ended;
    expect(r.status).toBe(EXIT.interrupted);
    expect(lines(r.stdout)).toEqual(['waiting']);
    expect(lines(r.stderr).at(-1)).toBe('fixture:tool: interrupted again: quitting at once');
  });
});

/** The dev entries package.json's scripts run, each with the scripts that run it. */
function devEntries(): Map<string, string[]> {
  const scripts = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const entries = new Map<string, string[]>();
  for (const [script, line] of Object.entries(scripts))
    for (const [, file] of line.matchAll(/\btsx (dev\/\S+\.ts)\b/g))
      entries.set(file!, [...(entries.get(file!) ?? []), script]);
  return entries;
}

describe('every dev entry of package.json', () => {
  const entries = devEntries();

  it('names a file that exists and goes through runDevTool', () => {
    // The dev tools of dev/{node,fidelity,kind,check-model} that npm runs: 13 files (fidelity's under 3 scripts).
    expect(entries.size).toBe(13);
    for (const file of entries.keys())
      expect(readFileSync(join(repoRoot, file), 'utf8'), file).toMatch(/\brunDevTool\(/);
  });

  // PATH holds nothing: should an entry ever take the flag and run, it finds no program to run (mount,
  // apt-get, go, kubectl, docker); the node's state goes to a temporary folder.
  const safeEnv = () => {
    const dir = temp('entry');
    return {
      PATH: join(dir, 'empty-path'),
      TERMLAB_NODE_STATE: join(dir, 'state'),
      TERMLAB_NODE_RUN: join(dir, 'run'),
      TERMLAB_NODE_KUBECONFIG: join(dir, 'no-kubeconfig'),
    };
  };

  it.concurrent.for([...entries])(
    '%s: refuses an unknown flag in one line naming its usage (exit 2)',
    async ([file, scripts]) => {
      const r = await start(file, ['--no-such-flag'], safeEnv()).ended;
      expect(r.status).toBe(EXIT.badInput);
      const [line, ...rest] = lines(r.stderr);
      expect(rest).toEqual([]);
      expect(line).toMatch(/^[\w:-]+: Unknown option '--no-such-flag'.* \(usage: npm run [\w:-]+/);
      // The line begins with the tool's name and its usage names a script: each one that runs this file.
      expect(scripts).toContain(/^([\w:-]+): /.exec(line!)![1]);
      expect(scripts).toContain(/\(usage: npm run ([\w:-]+)/.exec(line!)![1]);
      expect(r.stdout).toBe('');
    },
  );

  it.concurrent.for([...entries])('%s: --help prints its usage (exit 0)', async ([file, scripts]) => {
    const r = await start(file, ['--help'], safeEnv()).ended;
    expect(r.status).toBe(EXIT.ok);
    expect(r.stderr).toBe('');
    expect(scripts).toContain(/^usage: npm run ([\w:-]+)/.exec(r.stdout)?.[1]);
  });
});
