// npm run kind:down — deletes the lab's kind cluster (and only it). Safe to repeat.
import { CLUSTER_NAME, KIND_VERSION } from './versions.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { kindClusters, runStep } from './tools.ts';

const tool = { name: 'kind:down', usage: 'npm run kind:down' };

await runDevTool(tool, () => {
  devArgs(tool, {});
  if (!kindClusters(KIND_VERSION).includes(CLUSTER_NAME)) {
    console.log(`kind:down: no kind cluster named ${CLUSTER_NAME}; nothing to do`);
    return;
  }
  runStep('kind', ['delete', 'cluster', '--name', CLUSTER_NAME]);
  console.log(`kind:down: deleted kind cluster ${CLUSTER_NAME}`);
});
