// npm run tools:kubectl — builds kubectl of the node's Kubernetes version into .termlab/tools/bin.
// The kubectl suite needs 1.31 or later (WebSocket exec and tunnelled port-forward); Debian's
// kubernetes-client is older, so CI builds this one from the Go modules the node already uses.
import { join } from 'node:path';
import { buildKubectl } from './build.ts';
import { REPO } from './layout.ts';
import { StepError } from './steps.ts';
import { modulesFor, requestedVersion } from './versions.ts';

const output = join(REPO, '.termlab', 'tools', 'bin', 'kubectl');
try {
  const version = requestedVersion(process.argv.slice(2));
  const result = buildKubectl(modulesFor(version), output);
  console.log(`kubectl ${version} ${result}: ${output}`);
} catch (error) {
  console.error(`tools:kubectl: ${error instanceof StepError ? error.message : String(error)}`);
  process.exitCode = 1;
}
