// kind:up's choices: which kind node image a --kube value names, and whether a kind release is new enough.
import { KIND_NODE_IMAGES, KIND_VERSION, KUBE_MINORS, type KubeMinor } from './versions.ts';
import { TermlabError } from '../../lib/errors.ts';

/** --kube 1.36, v1.36 or the published patch (1.36.4); null without the flag. */
export function kubeMinor(value: string | undefined): KubeMinor | null {
  if (value === undefined) return null;
  const match = /^v?(\d+\.\d+)(\.\d+)?$/.exec(value);
  const minor = match?.[1] as KubeMinor | undefined;
  const published = minor && Object.hasOwn(KIND_NODE_IMAGES, minor) ? KIND_NODE_IMAGES[minor] : null;
  if (!published)
    throw new TermlabError(
      'USAGE',
      `--kube ${value}: kind ${KIND_VERSION} publishes node images here for ${KUBE_MINORS.join(', ')}`,
    );
  if (match![2] && !published.startsWith(`kindest/node:v${minor}${match![2]}@`)) {
    throw new TermlabError(
      'USAGE',
      `--kube ${value}: kind ${KIND_VERSION}'s ${minor} image is ${published.split('@')[0]}; pass --kube ${minor}`,
    );
  }
  return minor!;
}

/** "kind v0.33.0 go1.26.7 linux/amd64" -> [0, 33, 0]; null when it does not say. */
export function kindRelease(version: string): number[] | null {
  const match = /\bv(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? match.slice(1).map(Number) : null;
}

export function olderThan(a: number[], b: number[]): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}
