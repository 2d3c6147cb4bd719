// Where the CI node keeps its files. Everything it creates lives under these roots, so
// cluster:down can remove exactly what cluster:up made.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const MODULE_DIR = fileURLToPath(new URL('./', import.meta.url));
export const STATE = process.env.TERMLAB_NODE_STATE ?? '/var/lib/termlab-node';
export const RUN = process.env.TERMLAB_NODE_RUN ?? '/run/termlab-node';

export const NODE_NAME = 'termlab-node';
export const CONTEXT = 'termlab-node';
/** The version cluster:up brings up with no --kube: the one dev/node/go.mod pins. */
export const DEFAULT_KUBE_VERSION = 'v1.37.2';
/** etcd for the default version: 1.37.2's build/dependencies.yaml (and hack/lib/etcd.sh) name 3.7.0; dev/node/etcd/go.mod pins it. */
export const DEFAULT_ETCD_VERSION = 'v3.7.0';
export const POD_CIDR = '10.244.0.0/24';
export const SERVICE_CIDR = '10.96.0.0/16';
export const BRIDGE = 'termlab0';
/** The bridge's own address: the node's IP (a kubelet refuses a loopback one), on this machine only. */
export const NODE_IP = '10.244.0.1';

/** Each version's programs in a directory of their own, so switching versions never rebuilds the other. */
export function binaries(kubeVersion: string) {
  const dir = join(STATE, 'bin', kubeVersion);
  return { dir, kube: join(dir, 'kube'), etcd: join(dir, 'etcd'), kubectl: join(dir, 'kubectl') };
}

export const paths = {
  bin: join(STATE, 'bin'),
  pause: join(STATE, 'bin', 'pause'),
  /** Generated Go modules for versions other than the default (dev/node/go.mod is the default's). */
  src: join(STATE, 'src'),
  /** The version that is up, written by cluster:up, read by cluster:down and the runs that report it. */
  upVersion: join(STATE, 'kube-version'),
  /** The feature gates it was started with (`--feature-gates`), `none` without. */
  upGates: join(STATE, 'feature-gates'),
  pki: join(STATE, 'pki'),
  etcdData: join(STATE, 'etcd'),
  containerdRoot: join(STATE, 'containerd'),
  containerdState: join(RUN, 'containerd'),
  containerdSocket: join(RUN, 'containerd', 'containerd.sock'),
  containerdConfig: join(STATE, 'containerd.toml'),
  cniConf: join(STATE, 'cni', 'net.d'),
  kubeletRoot: join(STATE, 'kubelet'),
  kubeletConfig: join(STATE, 'kubelet-config.yaml'),
  kubeProxyConfig: join(STATE, 'kube-proxy-config.yaml'),
  images: join(STATE, 'images'),
  logs: join(STATE, 'logs'),
  pids: join(RUN, 'pids'),
  /** The kubeconfig users and tests take: context termlab-node. */
  kubeconfig: join(REPO, '.termlab', 'node', 'kubeconfig'),
};
