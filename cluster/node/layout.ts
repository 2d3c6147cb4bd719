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
export const KUBE_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.16';
export const POD_CIDR = '10.244.0.0/24';
export const SERVICE_CIDR = '10.96.0.0/16';
export const BRIDGE = 'termlab0';
/** The bridge's own address: the node's IP (a kubelet refuses a loopback one), on this machine only. */
export const NODE_IP = '10.244.0.1';

export const paths = {
  bin: join(STATE, 'bin'),
  kube: join(STATE, 'bin', 'kube'),
  etcd: join(STATE, 'bin', 'etcd'),
  pause: join(STATE, 'bin', 'pause'),
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
