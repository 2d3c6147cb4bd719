// Configuration of containerd, the CNI bridge, the kubelet and kube-proxy, for a root shell without systemd
// on cgroup v1 (see docs/ci-node.md for why each setting is there).
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import type { FeatureGates } from './gates.ts';
import { BRIDGE, NODE_IP, NODE_NAME, POD_CIDR, SERVICE_CIDR, paths } from './layout.ts';

export const PAUSE_IMAGE = 'docker.io/termlab/pause:0.1.0';
export const LAB_IMAGE = 'docker.io/termlab/lab-server:0.1.0';

export function writeContainerdConfig(snapshotter: string): void {
  writeFileSync(paths.containerdConfig, containerdConfig(snapshotter));
}

/**
 * containerd 2.4's configuration, version 4 (its latest: containerd 2.3 moved the listeners into server
 * plugins; 2.0 split the CRI plugin into io.containerd.cri.v1.images and .runtime). Written in the current
 * version so containerd does not migrate it on every start. Every socket is under the node's own RUN.
 */
export function containerdConfig(snapshotter: string): string {
  const runtime = "plugins.'io.containerd.cri.v1.runtime'";
  return `version = 4
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"

[plugins.'io.containerd.server.v1.grpc']
  address = "${paths.containerdSocket}"

# From version 4 no longer derived from the gRPC address: left out, it would be /run/containerd's.
[plugins.'io.containerd.server.v1.ttrpc']
  address = "${paths.containerdSocket}.ttrpc"

# The node's pods never use NRI; its default socket is machine-wide (/var/run/nri).
[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "${snapshotter}"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "${PAUSE_IMAGE}"

[${runtime}]
  # No CAP_SYS_RESOURCE here: without this every sandbox fails on oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  [${runtime}.containerd]
    default_runtime_name = "runc"
    [${runtime}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [${runtime}.containerd.runtimes.runc.options]
        # PID 1 is not systemd: cgroupfs everywhere.
        SystemdCgroup = false
  [${runtime}.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${paths.cniConf}"
`;
}

export function writeCniConfig(): void {
  mkdirSync(paths.cniConf, { recursive: true });
  writeFileSync(
    join(paths.cniConf, '10-termlab.conflist'),
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'termlab',
        plugins: [
          // Pods talk to the host over this bridge only; nothing is masqueraded out. Their one route beyond
          // the bridge is the Services' range, through the node (kube-proxy's rules), so ClusterIPs work in pods.
          {
            type: 'bridge',
            bridge: BRIDGE,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: { type: 'host-local', ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: SERVICE_CIDR }] },
          },
        ],
      },
      null,
      2,
    ),
  );
}

/** statfs(2) magic of cgroup2fs; a v1 host mounts a tmpfs at /sys/fs/cgroup with one hierarchy per controller. */
const CGROUP2_SUPER_MAGIC = 0x63677270;

export function cgroupV1(root = '/sys/fs/cgroup'): boolean {
  return statfsSync(root).type !== CGROUP2_SUPER_MAGIC;
}

export function writeKubeletConfig(onCgroupV1 = cgroupV1(), gates: FeatureGates = {}): void {
  writeFileSync(paths.kubeletConfig, toYaml(kubeletConfig(onCgroupV1, gates)));
}

/** The kubelet's configuration file, as an object (the kubelet takes feature gates there, as a map). */
export function kubeletConfig(onCgroupV1: boolean, gates: FeatureGates = {}): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // The API server reaches the kubelet (logs, port-forward) at the node IP, on the bridge.
    address: NODE_IP,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    // Only the API server on this machine talks to the kubelet.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    cgroupDriver: 'cgroupfs',
    // cgroup v1 without every controller: no QoS hierarchy, no node-allocatable enforcement.
    cgroupsPerQOS: false,
    enforceNodeAllocatable: [],
    // From 1.35 the kubelet refuses to start on cgroup v1 unless told otherwise: failCgroupV1 defaults to
    // true (1.37.2 pkg/kubelet/apis/config/v1beta1/defaults.go:291). These machines are cgroup v1, so false
    // here, and only here: on a cgroup v2 host the default stands, so nothing v1-only is carried over.
    ...(onCgroupV1 ? { failCgroupV1: false } : {}),
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    // Images come from `ctr import`, not a registry: no image GC, or the lab image would be removed.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '1Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    serializeImagePulls: false,
    maxPods: 30,
    ...(Object.keys(gates).length ? { featureGates: { ...gates } } : {}),
  };
}

/**
 * kube-proxy in iptables mode, as most clusters run it; every setting that would change the machine
 * beyond its own KUBE-* chains is turned off, so cluster:down (`kube-proxy --cleanup`) leaves it as found.
 */
export function writeKubeProxyConfig(kubeconfigFile: string, gates: FeatureGates = {}): void {
  writeFileSync(
    paths.kubeProxyConfig,
    toYaml({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: kubeconfigFile },
      hostnameOverride: NODE_NAME,
      mode: 'iptables',
      // The pods' range (the CNI bridge's): traffic from outside it to a Service is masqueraded.
      clusterCIDR: POD_CIDR,
      detectLocalMode: 'ClusterCIDR',
      // NodePorts answer on the node IP only, not on the host's other interfaces.
      nodePortAddresses: [`${NODE_IP}/32`],
      // Upstream's defaults (minSyncPeriod 1s): the propagation delay measured here is a real cluster's.
      // No NodePorts on 127.0.0.1: that needs route_localnet=1, a machine-wide sysctl.
      iptables: { syncPeriod: '30s', minSyncPeriod: '1s', localhostNodePorts: false, masqueradeAll: false },
      // 0 = leave as is. The nf_conntrack sysctls are writable here, but machine-wide and not restored by
      // --cleanup; the defaults would lower nf_conntrack_max (262144 to 131072) and shorten the established timeout.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      // Lowering it needs CAP_SYS_RESOURCE, which root here lacks (see the containerd config).
      oomScoreAdj: 0,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      ...(Object.keys(gates).length ? { featureGates: { ...gates } } : {}),
    }),
  );
}
