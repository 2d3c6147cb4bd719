// Every test file gets a temporary root of its own, removed after its last test: its run records
// (the runs a file starts stay out of the user's state directory and out of the files running beside
// it: a reaper lists every record it finds) and, through TMPDIR, every temporary folder the file or a
// process it starts makes. Before, a folder per test per run piled up in /tmp (over 3,000 here).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const shared = tmpdir();
const root = mkdtempSync(join(shared, 'termlab-test-'));
process.env.TERMLAB_STATE_DIR = join(root, 'state');
mkdirSync(process.env.TERMLAB_STATE_DIR);
// tsx keeps its compile cache in TMPDIR/tsx-<uid>: linked to the shared one, or every test file's
// first CLI spawn compiled the whole harness again (20-50 s apiece on a loaded machine).
const tsxCache = `tsx-${process.geteuid?.() ?? userInfo().username}`;
mkdirSync(join(shared, tsxCache), { recursive: true });
symlinkSync(join(shared, tsxCache), join(root, tsxCache));
// Node 22.1+'s compile cache of the CLI's bundle (bin/termlab.js) in the shared folder too, for the same reason.
process.env.NODE_COMPILE_CACHE ??= join(
  shared,
  `termlab-node-compile-cache-${process.geteuid?.() ?? userInfo().username}`,
);
process.env.TMPDIR = root;
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 3 }));
