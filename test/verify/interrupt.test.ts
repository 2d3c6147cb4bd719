// Ctrl-C late in a verification (after the rollout ran) on the simulated cluster: the run is stopped, not judged.
// A terminal's Ctrl-C signals the whole foreground process group; the simulated cluster's containers were in
// termlab's group, so the same Ctrl-C stopped the app's pods and the load pod, and the grade put the failed
// requests before the interruption: "❌ fail … N of M requests failed", exit 130. Now the pods run in their own
// groups (a real cluster's pods never get the user's Ctrl-C), and an interrupted run is inconclusive, exit 130,
// in verify and in `termlab grade` of its file alike.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContainerProcess } from '../../cluster/sim/runtime.ts';
import { EXIT } from '../../lib/errors.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot, spawnTs } from '../support/processes.ts';

const pgidOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);

describe('termlab verify stopped by Ctrl-C after the rollout', () => {
  it('is inconclusive (interrupted), exit 130, though requests failed before the Ctrl-C; grade says the same', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'termlab-verify-interrupt-')), 'out');
    // Its own process group, signalled as a whole: what a terminal does on Ctrl-C.
    const child = spawn(
      process.execPath,
      [
        'bin/termlab.js',
        'verify',
        'deployment/web',
        '--sim',
        '--apply',
        'manifests/verify-example.yaml',
        '--path',
        '/work?ms=200',
        // The proxies a second behind the EndpointSlice: with no preStop, requests surely fail in the rollout.
        '--proxy-sync-delay-ms',
        '1000',
        '--output-dir',
        out,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      // The rollout has completed and the load's tail is running: a late phase.
      if (!sent && stderr.includes('load finishing')) {
        sent = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(sent, stderr).toBe(true);
    expect(code, stderr).toBe(EXIT.interrupted);
    expect(stdout).toMatch(
      /⚠️ inconclusive {2}deployment\/web \(default\), rollout-restart: interrupted \(Ctrl-C\) while load finishing/,
    );
    expect(stdout).not.toMatch(/❌ fail/);

    const file = join(out, 'web.verification.json');
    const regraded = await runCli(['grade', file, '-o', 'json']);
    expect(regraded.code, regraded.stderr).toBe(EXIT.interrupted);
    const grade = JSON.parse(regraded.stdout) as { verdict: string; failed: number; interrupted: boolean };
    // The rollout did fail requests before the Ctrl-C: they are shown, but the verdict is not theirs to give.
    expect(grade.failed).toBeGreaterThan(0);
    expect(grade).toMatchObject({ verdict: 'inconclusive', interrupted: true });
    // The Ctrl-C reached termlab only: no old pod's log says it was signalled with SIGINT.
    const o = JSON.parse(readFileSync(file, 'utf8')) as { evidence: { podLogs: { lines: { text: string }[] }[] } };
    expect(o.evidence.podLogs.flatMap((l) => l.lines.map((x) => x.text)).filter((t) => /"SIGINT"/.test(t))).toEqual([]);
  }, 180_000);
});

describe("the simulated cluster's containers", () => {
  it("run in their own process group, out of reach of the terminal's Ctrl-C to termlab", async () => {
    const c = new ContainerProcess(['/bin/sleep', '30'], {});
    try {
      expect(pgidOf(c.pid!)).toBe(c.pid);
      expect(pgidOf(c.pid!)).not.toBe(pgidOf(process.pid));
    } finally {
      c.signal('SIGKILL');
      await c.exited;
    }
  });

  it('are killed when termlab exits without stopping its cluster (a second Ctrl-C quits at once)', async () => {
    const entry = join(mkdtempSync(join(tmpdir(), 'termlab-sim-exit-')), 'exit.ts');
    writeFileSync(
      entry,
      `import { ContainerProcess } from ${JSON.stringify(join(repoRoot, 'cluster/sim/runtime.ts'))};
const c = new ContainerProcess(['/bin/sleep', '30'], {});
console.log(JSON.stringify({ event: 'started', time: new Date().toISOString(), mono: performance.now(), pid: c.pid }));
process.exit(130);
`,
    );
    const p = spawnTs(entry, []);
    const { pid } = (await p.waitForEvent((e) => e.event === 'started', 'the container started')) as unknown as {
      pid: number;
    };
    expect(await p.exited).toMatchObject({ code: 130 });
    // Gone, or a zombie its new parent has yet to reap: not left running.
    const state = existsSync(`/proc/${pid}/stat`)
      ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0]
      : 'gone';
    if (state !== 'gone' && state !== 'Z') process.kill(pid, 'SIGKILL');
    expect(['gone', 'Z']).toContain(state);
  });
});
