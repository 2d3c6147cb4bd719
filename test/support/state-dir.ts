// Every test file gets a temporary root of its own, removed after its last test: its run records
// (the runs a file starts stay out of the user's state directory and out of the files running beside
// it: a reaper lists every record it finds) and, through TMPDIR, every temporary folder the file or a
// process it starts makes. Before, a folder per test per run piled up in /tmp (over 3,000 here).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'termlab-test-'));
process.env.TERMLAB_STATE_DIR = join(root, 'state');
mkdirSync(process.env.TERMLAB_STATE_DIR);
process.env.TMPDIR = root;
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 3 }));
