// npm run cluster:build [-- --kube vX.Y.Z] — builds one version's programs without touching the node
// that is up, so a version can be built (niced) while another runs. cluster:up then finds them built.
import { buildPrograms } from './build.ts';
import { StepError, timings } from './steps.ts';
import { requestedVersion } from './versions.ts';

async function main(): Promise<void> {
  const kubeVersion = requestedVersion(process.argv.slice(2));
  console.log(`Kubernetes ${kubeVersion}: build only`);
  await buildPrograms(kubeVersion);
  for (const t of timings) console.log(`  ${t.seconds.toFixed(1).padStart(7)}s  ${t.step}`);
}

main().catch((error) => {
  if (!(error instanceof StepError) || !timings.length) console.error(`cluster:build: ${(error as Error).message}`);
  console.error('cluster:build failed');
  process.exitCode = 1;
});
