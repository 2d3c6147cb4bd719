// A pod whose image cannot be pulled: which image, and which of the two ways to get it onto the
// node applies (kind load for a kind cluster, a registry and --image for any other).
import type * as k8s from '@kubernetes/client-node';

const PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff']);
/** Where a termlab release publishes the lab image (.github/workflows/release.yml). */
export const RELEASED_LAB_IMAGE = 'ghcr.io/<owner>/termlab/lab-server:<version>';

/** kind's context is kind-NAME and its nodes NAME-control-plane / NAME-worker[N]; null when neither says kind. */
export function kindClusterName(
  context: string | null | undefined,
  nodeName: string | null | undefined,
): string | null {
  const fromContext = /^kind-(.+)$/.exec(context ?? '')?.[1];
  if (fromContext) return fromContext;
  return /^(.+)-(control-plane|worker\d*)$/.exec(nodeName ?? '')?.[1] ?? null;
}

/** One sentence for a pod stuck on pulling its image; null when it is not. */
export function imagePullAdvice(pod: k8s.V1Pod, context: string | null | undefined): string | null {
  const stuck = pod.status?.containerStatuses?.find((c) => PULL_REASONS.has(c.state?.waiting?.reason ?? ''));
  if (!stuck) return null;
  const image = pod.spec?.containers.find((c) => c.name === stuck.name)?.image ?? stuck.image;
  const kind = kindClusterName(context, pod.spec?.nodeName);
  const fix =
    kind !== null
      ? `this is kind cluster "${kind}", whose node has no registry to pull it from: load it into the node (docker build -f server/Dockerfile --target lab -t ${image} . && kind load docker-image ${image} --name ${kind}), or run npm run kind:up, which does both`
      : `this cluster's nodes pull from a registry: push the lab image to one they can reach (a termlab release publishes ${RELEASED_LAB_IMAGE}) and pass --image with that name; a private registry needs an imagePullSecret in the namespace`;
  return `image ${image} cannot be pulled (${stuck.state!.waiting!.reason}): ${fix}`;
}
