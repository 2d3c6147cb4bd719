// npm run tools:kubectl — builds kubectl of the node's Kubernetes version into .termlab/tools/bin.
// The kubectl suite needs 1.31 or later (WebSocket exec and tunnelled port-forward); Debian's
// kubernetes-client is older, so CI builds this one from the Go modules the node already uses.
import { join } from 'node:path';
import { buildKubectl } from './build.ts';
import { REPO } from './layout.ts';
import { StepError } from './steps.ts';

const output = join(REPO, '.termlab', 'tools', 'bin', 'kubectl');
try {
  const result = buildKubectl(output);
  console.log(`kubectl ${result}: ${output}`);
} catch (error) {
  console.error(`tools:kubectl: ${error instanceof StepError ? error.message : String(error)}`);
  process.exitCode = 1;
}
