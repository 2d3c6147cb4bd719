// What kind:up, kind:down and .github/workflows/lab.yml agree on. kind supports a node image only
// with the kind release that built it, so the release and its images change together;
// test/ci/workflow.test.ts and test/ci/kind.test.ts keep the workflow and manifests/kind-config.yaml
// in step with this file.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import { formatIssue } from '../../lib/files.ts';
import { TermlabError } from '../../lib/errors.ts';
import { imageReference, LAB_IMAGE } from '../../server/image.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const KIND_VERSION = 'v0.33.0';
/** kind before this cannot `kind load` into KIND_VERSION's node images, and writes no kubeadm v1beta4. */
export const KIND_MINIMUM = 'v0.32.0';

/**
 * kind v0.33.0's node images for the supported minors, by digest, as its release notes list them
 * ("Images pre-built for this release", github.com/kubernetes-sigs/kind/releases/tag/v0.33.0; the
 * 1.37 one is also its pkg/apis/config/defaults/image.go). It also publishes
 * kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d,
 * left out here: 1.34 is out of support.
 */
export const KIND_NODE_IMAGES = {
  '1.37': 'kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5',
  '1.36': 'kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed',
  '1.35': 'kindest/node:v1.35.8@sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0',
} as const satisfies Record<string, string>;
export type KubeMinor = keyof typeof KIND_NODE_IMAGES;
export const KUBE_MINORS = Object.keys(KIND_NODE_IMAGES) as KubeMinor[];
/** kind v0.33.0's own default; manifests/kind-config.yaml pins it. */
export const DEFAULT_KUBE_MINOR: KubeMinor = '1.37';

/** The Kubernetes version inside a node image: kindest/node:v1.36.4@sha256:… -> v1.36.4. */
export function nodeImageVersion(image: string): string {
  const version = /^kindest\/node:(v\d+\.\d+\.\d+)@/.exec(image)?.[1];
  if (!version) throw new Error(`not a kindest/node image pinned by digest: ${image}`);
  return version;
}

/** kubectl of the node's own version (kubectl supports one minor either side of the API server). */
export const KUBECTL_VERSION = nodeImageVersion(KIND_NODE_IMAGES[DEFAULT_KUBE_MINOR]);
export const CLUSTER_NAME = 'termlab';
/** The kubeconfig context kind writes for the cluster. */
export const CONTEXT = `kind-${CLUSTER_NAME}`;
export const NAMESPACE = 'termlab';
export const KIND_CONFIG = 'manifests/kind-config.yaml';
export const CLUSTER_MANIFESTS = ['manifests/namespace.yaml', 'manifests/rbac.yaml'];
export const LAB_IMAGE_REFERENCE = imageReference(LAB_IMAGE);
/** How long kind waits for the control plane to be Ready (kind's --wait, kind-action's wait). */
export const CREATE_WAIT = '120s';

/** kind v0.32+ writes kubeadm v1beta4 for 1.36 and later (v1beta3 for 1.35); 1.37 reads no v1beta3. */
const KUBEADM_API = 'kubeadm.k8s.io/v1beta4';

// A patch with no apiVersion applies to whichever version kind writes; one naming an older kubeadm
// API would silently match nothing on 1.36+ (kind matches patches by kind and apiVersion).
const kubeadmPatch = z.string().superRefine((text, context) => {
  const apiVersion = (parse(text) as { apiVersion?: unknown } | null)?.apiVersion;
  if (typeof apiVersion === 'string' && apiVersion.startsWith('kubeadm.k8s.io/') && apiVersion !== KUBEADM_API) {
    context.addIssue({
      code: 'custom',
      message: `patches ${apiVersion}: kind ${KIND_VERSION} writes ${KUBEADM_API} for 1.36+; name ${KUBEADM_API} or no apiVersion`,
    });
  }
});

const kindConfigSchema = z.object({
  kind: z.literal('Cluster'),
  apiVersion: z.literal('kind.x-k8s.io/v1alpha4'),
  kubeadmConfigPatches: z.array(kubeadmPatch).optional(),
  nodes: z
    .array(
      z.object({
        role: z.string(),
        image: z.string().regex(/^kindest\/node:v[\d.]+@sha256:[0-9a-f]{64}$/, 'a kindest/node image pinned by digest'),
        kubeadmConfigPatches: z.array(kubeadmPatch).optional(),
      }),
    )
    .min(1),
});

/** The node image of manifests/kind-config.yaml; a bad file gets one line naming the file and field. */
export function kindNodeImage(file = `${REPO}${KIND_CONFIG}`): string {
  const parsed = kindConfigSchema.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    throw new TermlabError('INPUT_UNREADABLE', `${file}: ${formatIssue(parsed.error.issues[0]!, '(root)')}`, {
      source: file,
    });
  }
  return parsed.data.nodes[0]!.image;
}

/** The line to run the lab on the kind cluster. */
export const RUN_LINE = `npx termlab run --context ${CONTEXT} --namespace ${NAMESPACE}`;
