// Writes reports/examples/*.observation.json from the builder (until recorded runs replace them).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeObservation } from '../../harness/observation.ts';
import { exampleObservations } from './observations.ts';
import { repoRoot } from './processes.ts';

const dir = join(repoRoot, 'reports', 'examples');
mkdirSync(dir, { recursive: true });
for (const [name, observation] of Object.entries(exampleObservations())) {
  await writeObservation(join(dir, `${name}.observation.json`), observation);
  console.log(`wrote ${name}.observation.json`);
}
