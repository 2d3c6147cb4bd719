// npm run kind:up [-- --kube 1.35|1.36|1.37] — a one-node kind cluster for the lab: kind v0.33.0's
// node image for that minor (default: the one pinned in manifests/kind-config.yaml, 1.37), the lab
// image built from server/Dockerfile and loaded into the node, the namespace and RBAC applied.
// Ends by printing the `termlab run` line to use.
import {
  CLUSTER_MANIFESTS,
  CLUSTER_NAME,
  CONTEXT,
  CREATE_WAIT,
  KIND_CONFIG,
  KIND_MINIMUM,
  KIND_NODE_IMAGES,
  KIND_VERSION,
  KUBE_MINORS,
  LAB_IMAGE_REFERENCE,
  RUN_LINE,
  kindNodeImage,
  type KubeMinor,
} from './versions.ts';
import { kindRelease, kubeMinor, olderThan } from './kube.ts';
import { LAB_STAGE } from '../../server/dockerfile.ts';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { firstLine, kindClusters, requireDocker, run, runStep } from './tools.ts';

const tool = { name: 'kind:up', usage: `npm run kind:up -- [--kube ${KUBE_MINORS.join('|')}]` };

await runDevTool(tool, () => {
  const kube: KubeMinor | null = kubeMinor(devArgs(tool, { kube: { type: 'string' } }).values.kube);
  const configImage = kindNodeImage();
  const nodeImage = kube ? KIND_NODE_IMAGES[kube] : configImage;
  requireDocker();
  const version = firstLine(run('kind', ['version'], { kindVersion: KIND_VERSION }).stdout);
  const release = kindRelease(version);
  if (release && olderThan(release, kindRelease(KIND_MINIMUM)!)) {
    throw new TermlabError(
      'SETUP_FAILED',
      `${version} is older than ${KIND_MINIMUM}, which ${nodeImage.split('@')[0]} needs (kubeadm v1beta4, kind load): go install sigs.k8s.io/kind@${KIND_VERSION}`,
    );
  }
  if (kindClusters(KIND_VERSION).includes(CLUSTER_NAME)) {
    throw new TermlabError(
      'SETUP_FAILED',
      `a kind cluster named ${CLUSTER_NAME} already exists: use it (${RUN_LINE}) or remove it first (npm run kind:down)`,
    );
  }
  if (!version.includes(`${KIND_VERSION} `)) {
    process.stderr.write(
      `kind:up: note: the node images are kind ${KIND_VERSION}'s; this is ${version || 'an unknown kind'}\n`,
    );
  }
  // The image first: a build failure then leaves no cluster behind.
  console.log(`▶ docker build ${LAB_IMAGE_REFERENCE} (server/Dockerfile, target ${LAB_STAGE})`);
  runStep('docker', ['build', '-f', 'server/Dockerfile', '--target', LAB_STAGE, '-t', LAB_IMAGE_REFERENCE, '.']);
  console.log(`▶ kind create cluster ${CLUSTER_NAME} (${nodeImage})`);
  // --image overrides every node's image in the config (kind's documented flag).
  const image = nodeImage === configImage ? [] : ['--image', nodeImage];
  runStep('kind', [
    'create',
    'cluster',
    '--name',
    CLUSTER_NAME,
    '--config',
    KIND_CONFIG,
    ...image,
    '--wait',
    CREATE_WAIT,
  ]);
  console.log(`▶ kind load docker-image ${LAB_IMAGE_REFERENCE}`);
  runStep('kind', ['load', 'docker-image', LAB_IMAGE_REFERENCE, '--name', CLUSTER_NAME]);
  console.log(`▶ kubectl apply ${CLUSTER_MANIFESTS.join(' ')}`);
  runStep('kubectl', ['--context', CONTEXT, 'apply', ...CLUSTER_MANIFESTS.flatMap((file) => ['-f', file])]);
  console.log(`\nkind cluster ${CLUSTER_NAME} (${nodeImage.split('@')[0]}) is ready. Run the lab with:\n  ${RUN_LINE}`);
});
