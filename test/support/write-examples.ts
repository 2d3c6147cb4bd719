// Writes reports/examples/: real recorded runs from the simulated cluster where the runner can
// produce the outcome, built ones (from observations.ts) where it cannot (OOM, a rejected request).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { counted } from '../../harness/grade/attempts.ts';
import { gradePaths } from '../../harness/grade/files.ts';
import { ObservationSchema } from '../../harness/observation/schema.ts';
import { writeAnyObservation } from '../../harness/observation/write.ts';
import { exampleObservations } from './observations.ts';
import { repoRoot } from './processes.ts';

const dir = join(repoRoot, 'reports', 'examples');
mkdirSync(dir, { recursive: true });
const recorded = join(mkdtempSync(join(tmpdir(), 'termlab-examples-')), 'run');
execFileSync(
  process.execPath,
  [
    'bin/termlab.js',
    'run',
    '--sim',
    '--only',
    'short-grace,restored-grace,immediate-exit',
    '--owner',
    'example',
    '--output-dir',
    recorded,
  ],
  { cwd: repoRoot, stdio: 'inherit' },
);
// The try that counts, as the grader counts it (a busy machine may have run a pair half again).
const tries = counted((await gradePaths([recorded])).results);
const read = (name: string) =>
  ObservationSchema.parse(JSON.parse(readFileSync(tries.find((r) => r.scenario === name)!.source, 'utf8')));

const handEdited = read('short-grace');
// What a student might "fix" by hand: the outcome no longer matches the watch events or the server's log.
handEdited.request = {
  ...handEdited.request,
  outcome: 'completed',
  doneSeen: true,
  done: { bytes: handEdited.request.bytes, sha256: handEdited.request.sha256! },
  errorCode: null,
};
handEdited.finalState = { ...handEdited.finalState!, exitCode: 0, reason: 'Completed' };

const built = exampleObservations();
const examples = {
  'completed-0': read('restored-grace'),
  'cut-137-after-grace': read('short-grace'),
  'cut-17-immediate': read('immediate-exit'),
  'evidence-invalid': handEdited,
  'rejected-503': built['rejected-503']!,
  'oom-137': built['oom-137']!,
};
for (const [name, observation] of Object.entries(examples)) {
  await writeAnyObservation(join(dir, `${name}.observation.json`), observation);
  console.log(`wrote ${name}.observation.json`);
}
