// npm run cluster:build [-- --kube vX.Y.Z] — builds one version's programs without touching the node
// that is up, so a version can be built (niced) while another runs. cluster:up then finds them built.
import { isTermlabError, TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { buildPrograms, buildTraefik } from './build.ts';
import { TRAEFIK_VERSION, traefikBinary } from './traefik.ts';
import { printedByStep, step, timings } from './steps.ts';
import { KUBE_FLAG, requestedVersion } from './versions.ts';

const tool = { name: 'cluster:build', usage: 'npm run cluster:build -- [--kube vX.Y.Z]' };

await runDevTool(tool, async () => {
  const kubeVersion = requestedVersion(devArgs(tool, KUBE_FLAG).values.kube);
  console.log(`Kubernetes ${kubeVersion}: build only`);
  try {
    await buildPrograms(kubeVersion);
    // The edge's Traefik too (its image is made by cluster:up): the cold build that matters on a new machine.
    console.log(
      `  ${await step(`build the edge: Traefik ${TRAEFIK_VERSION}`, () => buildTraefik())}: ${traefikBinary()}`,
    );
  } catch (error) {
    if (!isTermlabError(error) || !printedByStep(error)) throw error;
    throw new TermlabError(error.code, 'a step failed (above)', error.context, { cause: error });
  }
  for (const t of timings) console.log(`  ${t.seconds.toFixed(1).padStart(7)}s  ${t.step}`);
});
