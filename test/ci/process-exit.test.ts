// Only a process's own entry ends it. Everything else throws a TermlabError (lib/errors.ts) and its entry
// picks the exit code from the one table: a command or a dev tool that called process.exit would skip its
// caller's clean-up and answer with a code of its own. The entries are listed here by name, each one a
// real process's first file; anything else that ends the process (process.exit, or process.exitCode set)
// fails this test.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';

const ENTRIES = [
  // termlab's CLI: the one place the harness's commands end.
  'harness/cli/main.ts',
  // The published bin and its bundle loader (they end through the CLI's main, and call nothing themselves).
  'bin/termlab.js',
  'bin/cli-bundle.js',
  // The dev tools' one runner (npm run cluster:up, fidelity, check:model, kind:up, ...).
  'dev/entry.ts',
  // The lab server: PID 1 in a pod, its exit codes are the pod contract (server/contract.ts).
  'server/main.ts',
  // npm run generate:protobuf: exits only inside its own `if this is the script` block.
  'cluster/sim/protobuf-generate.ts',
  // npm run bench:class-run: sets its exit code at its own top level.
  'bench/class-run.ts',
  // Run by hand on the real node (`npx tsx test/verify/node-rbac.ts ...`), not by vitest.
  'test/verify/node-rbac.ts',
  // Writes a small program that exits with the sim's containers still running, as the CLI's second Ctrl-C does.
  'test/verify/interrupt.test.ts',
  // The simulated Traefik: PID 1 of the edge's pod in the sim, its exit codes are Traefik's (a bad flag: 1).
  'cluster/sim/edge/main.ts',
  // Writes a one-request client program run as a child while the sim's main thread is blocked.
  'test/sim/proxy-worker.test.ts',
];

const SKIP = new Set(['node_modules', '.git', 'dist', '.termlab', 'reports']);
const SOURCE = /\.(?:[cm]?[jt]s)$/;
/** A call of process.exit, or process.exitCode set. */
const ENDS_PROCESS = /\bprocess\s*\.\s*exit\s*\(|\bprocess\s*\.\s*exitCode\s*=(?!=)/;

function sources(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (SOURCE.test(entry.name)) found.push(relative(repoRoot, path));
  }
  return found;
}

describe('who ends the process', () => {
  const ending = sources(repoRoot).filter((file) => ENDS_PROCESS.test(readFileSync(join(repoRoot, file), 'utf8')));

  it('every listed entry exists, and the scan sees those that end the process themselves', () => {
    for (const entry of ENTRIES) expect(existsSync(join(repoRoot, entry)), entry).toBe(true);
    expect(ending).toEqual(expect.arrayContaining(['harness/cli/main.ts', 'dev/entry.ts', 'server/main.ts']));
  });

  it('no file outside the entries calls process.exit or sets process.exitCode', () => {
    expect(ending.filter((file) => !ENTRIES.includes(file)).sort()).toEqual([]);
  });
});
