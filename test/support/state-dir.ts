// Every test file gets run records of its own: the runs a file starts stay out of the user's state
// directory and out of the files running beside it (a reaper lists every record it finds).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const stateDir = mkdtempSync(join(tmpdir(), 'termlab-test-state-'));
process.env.TERMLAB_STATE_DIR = stateDir;
// Removed with the file's last test: a folder per test file per run piled up in /tmp (1,691 here).
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
