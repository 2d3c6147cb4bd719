// Every test file gets run records of its own: the runs a file starts stay out of the user's state
// directory and out of the files running beside it (a reaper lists every record it finds).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.TERMLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'termlab-test-state-'));
