// Configuration of containerd, the CNI bridge, the kubelet and kube-proxy, for a root shell without systemd
// on cgroup v1 (see docs/ci-node.md for why each setting is there).
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { BRIDGE, NODE_IP, NODE_NAME, POD_CIDR, SERVICE_CIDR, paths } from './layout.ts';

export const PAUSE_IMAGE = 'docker.io/termlab/pause:0.1.0';
export const LAB_IMAGE = 'docker.io/termlab/lab-server:0.1.0';

export function writeContainerdConfig(snapshotter: string): void {
  writeFileSync(
    paths.containerdConfig,
    `version = 2
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"

[grpc]
  address = "${paths.containerdSocket}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # No CAP_SYS_RESOURCE here: without this every sandbox fails on oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "${snapshotter}"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # PID 1 is not systemd: cgroupfs everywhere.
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${paths.cniConf}"
`,
  );
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

export function writeKubeletConfig(onCgroupV1 = cgroupV1()): void {
  writeFileSync(
    paths.kubeletConfig,
    toYaml({
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
      // containerd 1.6 cannot pin images: no image GC, or the pause image would be removed.
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
    }),
  );
}

/**
 * kube-proxy in iptables mode, as most clusters run it; every setting that would change the machine
 * beyond its own KUBE-* chains is turned off, so cluster:down (`kube-proxy --cleanup`) leaves it as found.
 */
export function writeKubeProxyConfig(kubeconfigFile: string): void {
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
    }),
  );
}
