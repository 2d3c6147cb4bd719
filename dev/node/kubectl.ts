// npm run tools:kubectl — builds kubectl of the node's Kubernetes version into .termlab/tools/bin.
// The kubectl suite needs 1.31 or later (WebSocket exec and tunnelled port-forward); Debian's
// kubernetes-client is older, so CI builds this one from the Go modules the node already uses.
import { join } from 'node:path';
import { devArgs, runDevTool } from '../entry.ts';
import { buildKubectl } from './build.ts';
import { REPO } from './layout.ts';
import { asStepError } from './steps.ts';
import { KUBE_FLAG, modulesFor, requestedVersion } from './versions.ts';

const tool = { name: 'tools:kubectl', usage: 'npm run tools:kubectl -- [--kube vX.Y.Z]' };
const output = join(REPO, '.termlab', 'tools', 'bin', 'kubectl');

await runDevTool(tool, () => {
  const version = requestedVersion(devArgs(tool, KUBE_FLAG).values.kube);
  let result: string;
  try {
    result = buildKubectl(modulesFor(version), output);
  } catch (error) {
    throw asStepError(error);
  }
  console.log(`kubectl ${version} ${result}: ${output}`);
});
