// What kind:up, kind:down and .github/workflows/lab.yml agree on. kind supports a node image only
// with the kind release that built it, so the release and the image (manifests/kind-config.yaml)
// change together; test/ci/workflow.test.ts keeps the workflow in step with both.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import { imageReference, LAB_IMAGE } from '../../server/image.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** kind v0.30.0's own default node image is kindest/node:v1.34.0 (pkg/apis/config/defaults/image.go at that tag). */
export const KIND_VERSION = 'v0.30.0';
/** kubectl of the cluster's minor version. */
export const KUBECTL_VERSION = 'v1.34.0';
export const CLUSTER_NAME = 'termlab';
/** The kubeconfig context kind writes for the cluster. */
export const CONTEXT = `kind-${CLUSTER_NAME}`;
export const NAMESPACE = 'termlab';
export const KIND_CONFIG = 'manifests/kind-config.yaml';
export const CLUSTER_MANIFESTS = ['manifests/namespace.yaml', 'manifests/rbac.yaml'];
export const LAB_IMAGE_REFERENCE = imageReference(LAB_IMAGE);
/** How long kind waits for the control plane to be Ready (kind's --wait, kind-action's wait). */
export const CREATE_WAIT = '120s';

const kindConfigSchema = z.object({
  kind: z.literal('Cluster'),
  apiVersion: z.literal('kind.x-k8s.io/v1alpha4'),
  nodes: z.array(z.object({ role: z.string(), image: z.string().regex(/^kindest\/node:v[\d.]+@sha256:[0-9a-f]{64}$/, 'a kindest/node image pinned by digest') })).min(1),
});

/** The node image of manifests/kind-config.yaml; a bad file gets one line naming the file and field. */
export function kindNodeImage(file = `${REPO}${KIND_CONFIG}`): string {
  const parsed = kindConfigSchema.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data.nodes[0]!.image;
}

/** The line to run the lab on the kind cluster. */
export const RUN_LINE = `npx termlab run --context ${CONTEXT} --namespace ${NAMESPACE}`;
