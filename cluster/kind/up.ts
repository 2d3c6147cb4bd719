// npm run kind:up — a one-node kind cluster for the lab: the node image pinned in
// manifests/kind-config.yaml, the lab image built from server/Dockerfile and loaded into the node,
// the namespace and RBAC applied. Ends by printing the `termlab run` line to use.
import { CLUSTER_MANIFESTS, CLUSTER_NAME, CONTEXT, CREATE_WAIT, KIND_CONFIG, KIND_VERSION, LAB_IMAGE_REFERENCE, RUN_LINE, kindNodeImage } from './versions.ts';
import { LAB_STAGE } from '../../server/dockerfile.ts';
import { firstLine, KindSetupError, kindClusters, main, requireDocker, run, runStep } from './tools.ts';

main('kind:up', () => {
  const nodeImage = kindNodeImage();
  requireDocker();
  const version = firstLine(run('kind', ['version'], { kindVersion: KIND_VERSION }).stdout);
  if (kindClusters(KIND_VERSION).includes(CLUSTER_NAME)) {
    throw new KindSetupError(`a kind cluster named ${CLUSTER_NAME} already exists: use it (${RUN_LINE}) or remove it first (npm run kind:down)`);
  }
  if (!version.includes(`${KIND_VERSION} `)) {
    process.stderr.write(`kind:up: note: ${KIND_CONFIG}'s node image is built for kind ${KIND_VERSION}; this is ${version || 'an unknown kind'}\n`);
  }
  // The image first: a build failure then leaves no cluster behind.
  console.log(`▶ docker build ${LAB_IMAGE_REFERENCE} (server/Dockerfile, target ${LAB_STAGE})`);
  runStep('docker', ['build', '-f', 'server/Dockerfile', '--target', LAB_STAGE, '-t', LAB_IMAGE_REFERENCE, '.']);
  console.log(`▶ kind create cluster ${CLUSTER_NAME} (${nodeImage})`);
  runStep('kind', ['create', 'cluster', '--name', CLUSTER_NAME, '--config', KIND_CONFIG, '--wait', CREATE_WAIT]);
  console.log(`▶ kind load docker-image ${LAB_IMAGE_REFERENCE}`);
  runStep('kind', ['load', 'docker-image', LAB_IMAGE_REFERENCE, '--name', CLUSTER_NAME]);
  console.log(`▶ kubectl apply ${CLUSTER_MANIFESTS.join(' ')}`);
  runStep('kubectl', ['--context', CONTEXT, 'apply', ...CLUSTER_MANIFESTS.flatMap((file) => ['-f', file])]);
  console.log(`\nkind cluster ${CLUSTER_NAME} is ready. Run the lab with:\n  ${RUN_LINE}`);
});
