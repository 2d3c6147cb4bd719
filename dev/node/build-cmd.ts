// npm run cluster:build [-- --kube vX.Y.Z] — builds one version's programs without touching the node
// that is up, so a version can be built (niced) while another runs. cluster:up then finds them built.
import { isTermlabError, TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { buildPrograms } from './build.ts';
import { printedByStep, timings } from './steps.ts';
import { KUBE_FLAG, requestedVersion } from './versions.ts';

const tool = { name: 'cluster:build', usage: 'npm run cluster:build -- [--kube vX.Y.Z]' };

await runDevTool(tool, async () => {
  const kubeVersion = requestedVersion(devArgs(tool, KUBE_FLAG).values.kube);
  console.log(`Kubernetes ${kubeVersion}: build only`);
  try {
    await buildPrograms(kubeVersion);
  } catch (error) {
    if (!isTermlabError(error) || !printedByStep(error)) throw error;
    throw new TermlabError(error.code, 'a step failed (above)', error.context, { cause: error });
  }
  for (const t of timings) console.log(`  ${t.seconds.toFixed(1).padStart(7)}s  ${t.step}`);
});
